"""``python -m attnkit`` (and ``torchrun -m attnkit train ...``)."""

from .cli import entry

entry()
