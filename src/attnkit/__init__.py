"""attnkit: attention in sequence models, made real."""

from .api import load, train
from .version import __version__

__all__ = ["__version__", "load", "train"]
