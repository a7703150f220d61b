"""The Python API: ``attnkit.load(path_or_name)`` returns a translator or a classifier."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .pretrained import resolve


def load(path_or_name: str | Path | None = None, kind: str = "translator", int8: bool = False) -> Any:
    """Load a checkpoint or shipped model by name; its config says whether it translates or classifies.

    ``int8``: run with int8 weights (CPU dynamic quantization; see ``attnkit.models.quantize``).
    """
    from .checkpoint import load_checkpoint

    path = resolve(path_or_name, kind)
    task = load_checkpoint(path)["config"].get("task", "translation")
    if task == "classification":
        from .classifier import Classifier

        return Classifier.from_checkpoint(path, int8=int8)
    from .translator import Translator

    return Translator.from_checkpoint(path, int8=int8)


def load_translator(path_or_name: str | Path | None = None, int8: bool = False, device: str = "cpu") -> Any:
    """``device``: cpu, cuda, cuda:N or auto (CUDA when present)."""
    from .translator import Translator

    return Translator.from_checkpoint(resolve(path_or_name, "translator"), int8=int8, device=device)


def train(config: Any, resume: bool = False) -> str:
    """Train an ``ExperimentConfig`` (``attnkit.config.load_config``); see ``attnkit.training.run.train``."""
    from .training.run import train as run_training

    return run_training(config, resume=resume)
