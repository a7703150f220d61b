"""One error type for a user's mistakes (torch-free, imports nothing of attnkit).

``AttnkitError`` and its subclasses say what the user gave that cannot work: the file and line, the field,
the expected shape or the valid names. Only they become exit code 2 with one line on stderr (the CLI) or a
4xx JSON answer (the server). Any other exception is a bug and keeps its traceback (exit 1) or becomes a
logged 500 with an id. Each subclass is also a ``ValueError``, so code written against attnkit 0.1, which
raised plain ``ValueError`` for these, keeps working.
"""

from __future__ import annotations

from typing import Any


class AttnkitError(Exception):
    """A user's mistake: bad input, a bad option, a file that cannot be used. Never a bug."""


class UsageError(AttnkitError, ValueError):
    """A bad argument or option value, or a combination of options that cannot work together."""


class ConfigError(AttnkitError, ValueError):
    """A configuration problem: unknown key, wrong type, bad value."""


class DataError(AttnkitError, ValueError):
    """Malformed input data; the message names the file and the line."""


class CheckpointError(AttnkitError, ValueError):
    """A file that is not a valid attnkit checkpoint; the message names the file and the problem."""


class ExportError(AttnkitError, ValueError):
    """A folder that is not a valid attnkit export, or an export that failed its check."""


class DeviceError(AttnkitError, ValueError):
    """A device that is not valid here (a typo, or CUDA asked for on a machine without it)."""


class UnknownNameError(AttnkitError, LookupError):
    """A name that is not in a table (a model, a method, a dataset); the message lists the valid ones."""


def shorten(value: Any, limit: int = 60) -> str:
    """``value`` as JSON spells it (the server's errors answer JSON requests; Python's repr where JSON has
    no spelling), cut to ``limit`` characters, so an error never echoes a huge input back whole."""
    import json

    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):  # not JSON, or an integer past Python's digit limit for str()
        try:
            text = repr(value)
        except ValueError:
            text = f"an integer of {int(value).bit_length()} bits"
    if len(text) <= limit:
        return text
    return f"{text[: limit - 20]}... ({len(text)} characters)"


class NotFoundError(AttnkitError, FileNotFoundError):
    """A model, file or folder the user named that does not exist; the message says what is valid."""


class InvariantError(RuntimeError):
    """A result that breaks its type's invariants (``attnkit.invariants``): a bug in attnkit, never the
    user's mistake, so it is not an ``AttnkitError`` and keeps its traceback (exit 1, a logged 500)."""
