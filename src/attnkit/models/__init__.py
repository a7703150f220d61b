"""Models built by injection from a typed config: ``build_model(config.model, vocab_size)``.

The names below import torch on first use, so ``attnkit.models.options`` (each model's options, read by
the config) loads without it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the names as the type checker sees them; imported on first use at run time
    from .build import MODELS, build_model
    from .outputs import Seq2SeqOutput
    from .rnn_seq2seq import RNNSeq2Seq

_LAZY = {
    "MODELS": ".build",
    "build_model": ".build",
    "Seq2SeqOutput": ".outputs",
    "RNNSeq2Seq": ".rnn_seq2seq",
}
__all__ = ["MODELS", "RNNSeq2Seq", "Seq2SeqOutput", "build_model"]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_LAZY[name], __name__), name)
