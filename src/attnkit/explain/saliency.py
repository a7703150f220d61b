"""Gradient saliency of each target token with respect to the source embeddings (a torch model).

Under forced decoding of a given target, for target piece t and source piece s:
``saliency[t, s] = |sum_e x_se * d log p(y_t | y_<t, x) / d x_se|`` (gradient x input, Captum's
``InputXGradient``; Ding et al. 2019 align words with it), each row normalised to sum to 1 over the
real source pieces. The matrices have the shape of ``Translator.forced_attention``'s, so every
alignment method applies to them as to attention.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from ..data.batching import make_batch
from ..device import model_device, to_device
from ..errors import UsageError


def _token_log_prob(
    src_embedded: Tensor, src_mask: Tensor, tgt_in: Tensor, tgt_out: Tensor, model: Any, t: int
) -> Tensor:
    """log p(tgt_out[:, t]) per row (B,) from source embeddings (B, S, E)."""
    logits = model.forward_embedded(src_embedded, src_mask, tgt_in).logits  # (B, T, V_out)
    index = model.output.targets(tgt_out[:, t : t + 1]).clamp_min(0)  # (B, 1); padding -> any index
    return torch.log_softmax(logits[:, t].float(), -1).gather(1, index).squeeze(1)


def saliency_maps(
    translator: Any, sources: Sequence[str], targets: Sequence[str], batch_size: int = 32
) -> list[tuple[list[str], list[str], np.ndarray]]:
    """Per pair (source pieces + </s>, target pieces + </s>, saliency (T, S)), as
    ``forced_attention`` returns attention. ``translator``: a torch ``Translator``."""
    from captum.attr import InputXGradient

    model = getattr(translator, "model", None)
    if model is None or not hasattr(model, "forward_embedded"):
        raise UsageError("saliency needs a torch model: load the translator with --backend torch")
    model.eval()
    src_ids, tgt_ids = translator.pair_ids(sources, targets)
    explainer = InputXGradient(_token_log_prob)
    out = []
    for start in range(0, len(sources), batch_size):
        chunk = range(start, min(start + batch_size, len(sources)))
        batch = to_device(
            make_batch([src_ids[i] for i in chunk], [tgt_ids[i] for i in chunk]), model_device(model)
        )
        embedded = model.source_embedding(batch.src).detach()  # (B, S, E)
        maps = torch.zeros(batch.tgt_out.shape + (batch.src.shape[1],))  # (B, T, S)
        for t in range(batch.tgt_out.shape[1]):
            grads = explainer.attribute(
                embedded.clone().requires_grad_(True),
                additional_forward_args=(batch.src_mask, batch.tgt_in, batch.tgt_out, model, t),
            )
            maps[:, t] = grads.detach().sum(-1).abs().float().cpu() * batch.src_mask.cpu()
        maps = maps / maps.sum(-1, keepdim=True).clamp_min(1e-12)
        out += [
            translator.pair_maps(src_ids[i], tgt_ids[i], maps[row].numpy()) for row, i in enumerate(chunk)
        ]
    return out
