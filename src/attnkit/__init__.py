"""attnkit: attention in sequence models, made real."""

__version__ = "0.1.0"

__all__ = ["__version__"]
