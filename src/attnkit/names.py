"""The one name table: every name attnkit looks up, and where its object lives, as ``"module:attr"``.

Nothing is imported until a name is used, so ``attnkit --help`` and ``attnkit list`` stay instant while
showing the same names the code resolves. ``Registry`` (the one registry class) reads these tables; the
config's validation (``MODEL_TASKS``), a checkpoint's and an export's task checks (``TASKS``,
``EXPORT_KINDS``) and the CLI's choices all derive from them.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from .errors import UsageError

# What a model does: one vocabulary for configs, checkpoints, exports and the registry.
TASKS = ("captioning", "classification", "translation")
# a decoder-only model's head roles (``explain.roles`` names them; the views colour them), in rule order
HEAD_ROLES = ("induction", "previous-token", "sink", "local", "broad", "mixed")


class Entry(NamedTuple):
    target: str  # "module:attr", imported on first use
    task: str = ""  # a model's task (one of TASKS); empty for names that are not models
    config: str = ""  # a model's options dataclass, "module:attr" (torch-free: ``models.options``)


_BUILD = "attnkit.models.build:"
MODEL_TABLE: dict[str, Entry] = {
    "captioner": Entry(_BUILD + "build_captioner", "captioning", "attnkit.models.options:CaptionerConfig"),
    "han": Entry(_BUILD + "build_han", "classification", "attnkit.models.options:HANConfig"),
    "hard_captioner": Entry(
        _BUILD + "build_hard_captioner", "captioning", "attnkit.models.options:CaptionerConfig"
    ),
    "rnn": Entry(_BUILD + "build_rnn", "translation", "attnkit.models.options:RNNConfig"),
    "transformer": Entry(
        _BUILD + "build_transformer", "translation", "attnkit.models.options:TransformerConfig"
    ),
}
# Models configured by (and exported as) another model's section: hard attention is a captioner option.
SECTIONS = {"hard_captioner": "captioner"}
# Every section name a model config may carry (``model.rnn``, ``model.transformer``, ...).
SECTION_NAMES = tuple(sorted({SECTIONS.get(name, name) for name in MODEL_TABLE}))

_SCORERS = "attnkit.attention.scorers:"
SCORER_TABLE: dict[str, Entry] = {
    "additive": Entry(_SCORERS + "AdditiveScorer"),
    "bahdanau": Entry(_SCORERS + "AdditiveScorer"),
    "bilinear": Entry(_SCORERS + "GeneralScorer"),
    "concat": Entry(_SCORERS + "ConcatScorer"),
    "dot": Entry(_SCORERS + "DotScorer"),
    "general": Entry(_SCORERS + "GeneralScorer"),
    "location": Entry(_SCORERS + "LocationScorer"),
    "scaled_dot": Entry(_SCORERS + "ScaledDotScorer"),
}

MODELS = tuple(sorted(MODEL_TABLE))
MODEL_TASKS = {name: entry.task for name, entry in sorted(MODEL_TABLE.items())}
SCORERS = tuple(sorted(SCORER_TABLE))
# An export's ``kind`` (the architecture its graphs follow) -> its task.
EXPORT_KINDS = {name: task for name, task in MODEL_TASKS.items() if name not in SECTIONS}

ALIGNMENT_METHODS = ("argmax", "intersect", "threshold", "union")
ATTENTION_MAPS = ("attention", "rollout", "flow", "norm", "grad", "value_zeroing")
ALIGNMENT_SCORES = ATTENTION_MAPS + ("saliency",)
SYMMETRIZATIONS = ("grow-diag-final", "grow-diag", "intersection", "union", "mean")
ATTRIBUTION_METHODS = ATTENTION_MAPS + ("gradient_x_input", "integrated_gradients", "leave_one_out", "random")


def resolve(target: str) -> Any:
    """``"package.module:attr"`` -> the object (importing the module now)."""
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


class Registry:
    """Names -> objects through a table of ``Entry``s, imported on first use. Unknown names raise
    ``UsageError`` listing the valid ones."""

    def __init__(self, kind: str, table: Mapping[str, Entry]) -> None:
        self.kind, self.table = kind, table

    def get(self, name: str) -> Any:
        return resolve(self.entry(name).target)

    def entry(self, name: str) -> Entry:
        try:
            return self.table[name]
        except KeyError:
            valid = ", ".join(self.names())
            raise UsageError(f"unknown {self.kind} {name!r}; valid names: {valid}") from None

    def task(self, name: str) -> str:
        return self.entry(name).task

    def names(self, task: str | None = None) -> list[str]:
        return sorted(n for n, e in self.table.items() if task is None or e.task == task)

    def tasks(self) -> dict[str, str]:
        return {n: self.table[n].task for n in self.names()}

    def __contains__(self, name: object) -> bool:
        return name in self.table

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())
