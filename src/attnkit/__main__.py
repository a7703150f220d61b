"""``python -m attnkit`` (and ``torchrun -m attnkit train ...``)."""

from .cli.main import entry

entry()
