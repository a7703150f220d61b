"""One dynamic int8 linear layer (``quantize`` and the tied output layer both make them; imports nothing
of attnkit, so the two do not import each other)."""

from __future__ import annotations

import warnings

from torch import Tensor, nn


def int8_linear(weight: Tensor) -> nn.Module:
    """A dynamic int8 ``y = x W^T`` (per-row scales) from a float weight (V, E)."""
    from torch.ao.nn.quantized.dynamic import Linear as DynamicLinear
    from torch.ao.quantization import per_channel_dynamic_qconfig

    linear = nn.Linear(weight.shape[1], weight.shape[0], bias=False)
    linear.weight = nn.Parameter(weight.detach().float().clone(), requires_grad=False)
    linear.qconfig = per_channel_dynamic_qconfig  # type: ignore[assignment]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DynamicLinear.from_float(linear)
