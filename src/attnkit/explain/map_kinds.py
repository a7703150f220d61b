"""Which attention-derived map (``attention_maps``) applies to which translator, without importing torch:
read off the task x backend table (``attnkit.tasks``: what each kind provides, what each map needs).

- transformer (attnkit's, torch): every map;
- rnn (attnkit's, torch): attention, norm, grad, value_zeroing; rollout and flow propagate attention
  through stacked residual self-attention layers, and an RNN has one attention layer;
- hf (a Hugging Face encoder-decoder): attention, rollout, flow, grad from the attentions transformers
  returns; norm and value zeroing need each head's value vectors, which it does not return;
- onnx-*: attention only (the other maps read the torch model: load it with --backend torch).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import UsageError
from ..names import ATTENTION_MAPS as METHODS
from ..tasks import applies as _applies
from ..tasks import refusal

LAYERED = ("rollout", "flow", "grad")  # read every layer: no --layer / --heads


def model_kind(translator: Any) -> str:
    """The translator's row of ``tasks.PROVIDES`` (transformer, rnn, onnx-transformer, onnx-rnn, hf,
    causal), as the translator declares it."""
    return str(translator.kind)


def applies(method: str, kind: str) -> bool:
    return method in METHODS and _applies(method, kind)


def check_method(
    method: str,
    kind: str,
    layer: int | None = None,
    heads: Sequence[int] | None = None,
    name: str = "this model",
) -> None:
    """One line for an unknown method, one that does not apply to ``kind`` (naming the model ``name``,
    what it lacks and what applies), or a layer/head choice that the method ignores."""
    if method not in METHODS:
        raise UsageError(f"unknown attention map {method!r}; valid: {', '.join(METHODS)}")
    if not applies(method, kind):
        raise UsageError(refusal(method, kind, name))
    if method in LAYERED and (layer is not None or heads):
        raise UsageError(f"--layer/--heads do not apply to --attention-map {method}: it reads every layer")
    if method == "value_zeroing" and heads:
        raise UsageError("--heads does not apply to value_zeroing: it zeroes a value in every head")
