"""Which attention-derived map (``attention_maps``) applies to which translator, without importing torch.

- transformer (attnkit's): every map;
- rnn (attnkit's): attention, norm, grad, value_zeroing; rollout and flow propagate attention through
  stacked residual self-attention layers, and an RNN has one attention layer (its rollout is its attention);
- hf (a Hugging Face encoder-decoder): attention, rollout, flow, grad from the attentions transformers
  returns; norm and value zeroing need each head's value vectors, which it does not return;
- onnx: attention only (the other maps read the torch model: load it with --backend torch).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import UsageError
from ..names import ATTENTION_MAPS as METHODS

LAYERED = ("rollout", "flow", "grad")  # read every layer: no --layer / --heads
NOT_FOR = {
    "transformer": (),
    "rnn": ("rollout", "flow"),
    "hf": ("norm", "value_zeroing"),
    "onnx": tuple(m for m in METHODS if m != "attention"),
}
WHY = {
    "rnn": "does not apply to an RNN translator: it propagates attention through stacked residual "
    "self-attention layers, and an RNN has one attention layer",
    "hf": "does not apply to a Hugging Face model: it needs each head's value vectors, which transformers "
    "does not return",
    "onnx": "reads the torch model (gradients, values): load it with --backend torch",
}


def model_kind(translator: Any) -> str:
    """transformer, rnn (attnkit's torch models), hf (a Hugging Face encoder-decoder) or onnx."""
    model = getattr(translator, "model", None)
    if hasattr(translator, "teacher_forced"):
        return "hf"
    if model is None or not hasattr(model, "trace"):
        return "onnx"
    return "transformer" if getattr(model, "attention_layers", 0) else "rnn"


def applies(method: str, kind: str) -> bool:
    return method in METHODS and method not in NOT_FOR[kind]


def check_method(
    method: str, kind: str, layer: int | None = None, heads: Sequence[int] | None = None
) -> None:
    """One line for an unknown method, one that does not apply to ``kind``, or a layer/head choice
    that the method ignores."""
    if method not in METHODS:
        raise UsageError(f"unknown attention map {method!r}; valid: {', '.join(METHODS)}")
    if not applies(method, kind):
        valid = ", ".join(m for m in METHODS if applies(m, kind))
        raise UsageError(f"{method} {WHY[kind]}; valid for it: {valid}")
    if method in LAYERED and (layer is not None or heads):
        raise UsageError(f"--layer/--heads do not apply to --attention-map {method}: it reads every layer")
    if method == "value_zeroing" and heads:
        raise UsageError("--heads does not apply to value_zeroing: it zeroes a value in every head")
