"""One logger for attnkit, to stderr, and progress bars that respect ``--quiet`` (torch-free).

``log`` is the ``logging`` logger "attnkit": library code reports through it (``log.info``) and never
prints; importing attnkit adds only a ``NullHandler``. ``configure(quiet)`` (only the CLI calls it) sends it
to stderr as ``[attnkit] message``
through ``tqdm.write``, so messages never tear a progress bar; ``quiet`` keeps warnings and errors
only and turns progress bars off. ``progress(iterable, ...)`` is tqdm on stderr, off when quiet.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")
log = logging.getLogger("attnkit")
_state = {"quiet": False}


class _TqdmHandler(logging.Handler):
    """Writes each record above a running progress bar instead of through it."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            running = sys.modules.get("tqdm")  # imported by ``progress`` only when a bar is shown
            if running is None:
                print(self.format(record), file=sys.stderr)
            else:
                running.tqdm.write(self.format(record), file=sys.stderr)
        except Exception:  # a logging handler must never raise into the caller
            self.handleError(record)


def configure(quiet: bool = False) -> None:
    """Route ``log`` to stderr once (INFO, or WARNING when ``quiet``) and set progress bars on/off."""
    _state["quiet"] = quiet
    log.setLevel(logging.WARNING if quiet else logging.INFO)
    if not any(isinstance(h, _TqdmHandler) for h in log.handlers):
        handler = _TqdmHandler()
        handler.setFormatter(logging.Formatter("[attnkit] %(message)s"))
        log.addHandler(handler)
        log.propagate = False


def quiet() -> bool:
    return _state["quiet"]


def progress(
    iterable: Iterable[T], total: int | None = None, desc: str = "", unit: str = "batch", minimum: int = 5
) -> Iterator[T]:
    """``iterable`` with a tqdm bar on stderr; none when quiet, for fewer than ``minimum`` items (a
    single request of the server), or when stderr is not a terminal and ``ATTNKIT_PROGRESS`` is unset."""
    import os

    shown = sys.stderr.isatty() or bool(os.environ.get("ATTNKIT_PROGRESS"))
    if _state["quiet"] or not shown or (total is not None and total < minimum):
        yield from iterable  # no bar, and no tqdm import (~50 ms of a one-sentence command)
        return
    from tqdm import tqdm

    bar: Any = tqdm(iterable, total=total, desc=desc, unit=unit, file=sys.stderr, leave=False)
    yield from bar


# A library configures nothing on import: messages go nowhere until the application (the CLI calls
# ``configure``) or the user (``logging.basicConfig``) says where.
log.addHandler(logging.NullHandler())
