"""attnkit: attention in sequence models, made real."""

__version__ = "0.1.0"

from .api import load  # noqa: E402

__all__ = ["__version__", "load"]
