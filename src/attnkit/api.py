"""The Python API: ``attnkit.load(path_or_name)`` returns a translator or a classifier."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .pretrained import resolve


def load(path_or_name: str | Path | None = None, kind: str = "translator") -> Any:
    """Load a checkpoint or shipped model by name; its config says whether it translates or classifies."""
    from .training.checkpoint import load_checkpoint

    path = resolve(path_or_name, kind)
    task = load_checkpoint(path)["config"].get("task", "translation")
    if task == "classification":
        from .classifier import Classifier

        return Classifier.from_checkpoint(path)
    from .translator import Translator

    return Translator.from_checkpoint(path)


def load_translator(path_or_name: str | Path | None = None) -> Any:
    from .translator import Translator

    return Translator.from_checkpoint(resolve(path_or_name, "translator"))
