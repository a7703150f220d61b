"""The model registry: every model attnkit can build, by name, with the task it serves.

``register_model("name", task=...)`` decorates a builder ``(config: ModelConfig, vocab_size, *,
num_classes, target_ids, src_vocab_size) -> nn.Module``; ``build_model`` looks the name up, ``attnkit
list`` and config validation show the same names (``attnkit.names.MODELS`` and
``attnkit.config.MODEL_TASKS`` mirror it without importing torch; tests keep them equal), and the
contract tests are parametrized over ``MODELS.names()``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from torch import nn

from ..errors import UsageError

Builder = Callable[..., nn.Module]
TASKS = ("captioning", "classification", "translation")


@dataclass(frozen=True)
class ModelSpec:
    name: str
    task: str  # "translation" (the seq2seq step protocol) or "classification" (documents -> labels)
    build: Builder


class ModelRegistry:
    """Names -> ``ModelSpec``; ``get`` raises ValueError listing the valid names."""

    def __init__(self) -> None:
        self._specs: dict[str, ModelSpec] = {}

    def register(self, name: str, task: str) -> Callable[[Builder], Builder]:
        if task not in TASKS:
            raise ValueError(f"unknown task {task!r} for model {name!r}; valid: {', '.join(TASKS)}")

        def decorator(build: Builder) -> Builder:
            if name in self._specs:
                raise ValueError(f"model {name!r} is already registered")
            self._specs[name] = ModelSpec(name, task, build)
            return build

        return decorator

    def get(self, name: str) -> ModelSpec:
        try:
            return self._specs[name]
        except KeyError:
            raise UsageError(f"unknown model {name!r}; valid names: {', '.join(self.names())}") from None

    def names(self, task: str | None = None) -> list[str]:
        return sorted(n for n, s in self._specs.items() if task is None or s.task == task)

    def tasks(self) -> dict[str, str]:
        return {n: self._specs[n].task for n in self.names()}

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __iter__(self) -> Any:
        return iter(self.names())


MODELS = ModelRegistry()
register_model = MODELS.register
