"""``attnkit serve``: the attention explorer, a local web app and JSON API (Starlette on uvicorn)."""

from .app import create_app
from .models import ModelSet

__all__ = ["ModelSet", "create_app"]
