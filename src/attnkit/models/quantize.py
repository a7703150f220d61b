"""int8 weights for CPU decoding: PyTorch dynamic quantization (int8 weights, float activations).

Decoding one sentence is bound by reading weights, not by arithmetic: the tied output layer of the
shipped model alone is 5,644 x 256 fp32 (5.8 MB), read once per target token. Dynamic quantization
stores those weights as int8 (per output row for linear layers) and quantizes activations on the fly,
as CTranslate2 and Marian do on CPU. It is an inference-only copy: attention weights are computed
exactly as before from the (quantized-weight) layers' float outputs.
"""

from __future__ import annotations

import copy
import warnings

import torch
from torch import nn

from .output import TiedOutput

RECURRENT = (nn.GRU, nn.LSTM)


def _plan(model: nn.Module) -> dict[str, object]:
    """Qualified names of the layers to quantize, each with its qconfig.

    Linear layers whose raw ``.weight`` a parent reads (``reads_raw_weights``) stay float.
    """
    from torch.ao.quantization import default_dynamic_qconfig, per_channel_dynamic_qconfig

    plan: dict[str, object] = {}
    for name, parent in model.named_modules():
        if getattr(parent, "reads_raw_weights", False):
            continue
        for child_name, child in parent.named_children():
            full = f"{name}.{child_name}" if name else child_name
            if isinstance(child, nn.Linear):
                plan[full] = per_channel_dynamic_qconfig
            elif isinstance(child, RECURRENT):
                plan[full] = default_dynamic_qconfig
    return plan


def quantize_int8(model: nn.Module) -> nn.Module:
    """An int8-weight copy of a translation or classification model for CPU inference (eval mode).

    Quantizes ``nn.Linear`` (per row), ``nn.GRU``/``nn.LSTM`` and the tied output projection; embedding
    tables stay float. The original model is left untouched.
    """
    from torch.ao.quantization import quantize_dynamic

    quantized = copy.deepcopy(model).eval()
    with warnings.catch_warnings():  # torch.ao.quantization announces its move to torchao
        warnings.simplefilter("ignore")
        quantized = quantize_dynamic(quantized, _plan(quantized), dtype=torch.qint8)
        for module in quantized.modules():
            if isinstance(module, TiedOutput):
                module.freeze_int8()
    return quantized
