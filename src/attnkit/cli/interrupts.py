"""Ctrl-C that never lands inside an import.

A KeyboardInterrupt raised while a module is being imported leaves it half-initialized, and some
libraries' import code swallows it or turns it into something else: measured on the CLI, Ctrl-C during
torch's import was swallowed (training then ran to its end, exit 0), one during onnxruntime's became
``ImportError: initialization failed`` (exit 1), and a C++ extension can abort the process. So from the
console script's first line, a Ctrl-C that arrives while an import is running is held: it is raised as
soon as that import is done (checked every 20 ms with SIGALRM), at most as long as the import takes.
Anywhere else it is raised at once, as Python's own handler does. POSIX only; elsewhere nothing changes.
"""

from __future__ import annotations

import signal
from types import FrameType

_pending = {"interrupt": False}
RECHECK_S = 0.02


def _importing(frame: FrameType | None) -> bool:
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def _hold_or_raise(frame: FrameType | None) -> None:
    if _importing(frame):
        _pending["interrupt"] = True
        signal.setitimer(signal.ITIMER_REAL, RECHECK_S)
        return
    _pending["interrupt"] = False
    raise KeyboardInterrupt


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    _hold_or_raise(frame)


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    if _pending["interrupt"]:
        _hold_or_raise(frame)


def install() -> None:
    """Hold Ctrl-C during imports from now on (the CLI calls this before importing anything else)."""
    if hasattr(signal, "setitimer"):
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.signal(signal.SIGINT, _on_sigint)


def disarm() -> None:
    """The work is done: no held Ctrl-C is raised any more and no re-check alarm can fire during the
    interpreter's shutdown (where SIGALRM's default action would kill the process, exit -14)."""
    _pending["interrupt"] = False
    if hasattr(signal, "setitimer"):
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
