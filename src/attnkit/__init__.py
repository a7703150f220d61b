"""attnkit: attention in sequence models, made real.

``load``, ``train``, ``align`` and ``inspect`` are imported on first use, so ``import attnkit`` (and the
console script's start) stays light: the CLI's entry point catches Ctrl-C from its first import on
(``attnkit.cli.entry``).
"""

from typing import Any

from .version import __version__

__all__ = ["__version__", "align", "compare", "inspect", "load", "save_html", "show", "train"]


def __getattr__(name: str) -> Any:
    if name in ("load", "train"):
        from . import api

        return getattr(api, name)
    if name == "align":
        from .aligning import align

        return align
    if name == "inspect":
        from .inspecting import inspect

        return inspect
    if name in ("show", "save_html", "compare"):
        from . import notebook

        return getattr(notebook, name)
    raise AttributeError(f"module 'attnkit' has no attribute {name!r}")
