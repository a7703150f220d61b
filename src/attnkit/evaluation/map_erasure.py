"""Decoding-level check of attention maps: does a map point at the source word whose erasure changes
the output token most?

For a pair (source, the model's own output as forced target) and each source word j (its pieces
removed from the source), ``drop[t, j] = log p(y_t | x, y_<t) - log p(y_t | x without j, y_<t)``.
Per target piece t (</s> included) a map's top source word (its piece weights summed per word) is
compared with the word of largest drop: ``top1`` is the share of target pieces where they agree (the
chance level is the mean of 1 / number of source words, reported as ``chance``), ``drop_ratio`` the
mean of drop[t, map's word] / max_j drop[t, j], clipped at 0 (a word whose erasure raises p counts 0),
over pieces whose largest drop is positive.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from ..data.batching import make_batch
from ..data.words import word_groups
from ..device import model_device, to_device
from .faithfulness import bootstrap_interval


@torch.no_grad()
def _log_probs(translator: Any, src_ids: list[list[int]], tgt: list[int]) -> np.ndarray:
    """log p(y_t) of the same target under each source (V, T)."""
    model = translator.model
    batch = to_device(make_batch(src_ids, [tgt] * len(src_ids)), model_device(model))
    logits = model(batch.src, batch.src_mask, batch.tgt_in).logits.float()
    index = model.output.targets(batch.tgt_out).clamp_min(0)
    return torch.log_softmax(logits, -1).gather(2, index.unsqueeze(-1)).squeeze(-1).cpu().numpy()


def erasure_drops(translator: Any, src: list[int], tgt: list[int]) -> tuple[np.ndarray, list[list[int]]]:
    """drop (T, W) per target piece (with </s>) and source word, and the words' piece indices."""
    pieces = translator.tokenizer.pieces(list(src))
    groups = word_groups(pieces)
    variants = [src] + [[i for k, i in enumerate(src) if k not in set(g)] for g in groups]
    lp = _log_probs(translator, variants, tgt)
    return lp[0][None, :].T - lp[1:].T, groups


def erasure_agreement(
    translator: Any,
    sources: Sequence[str],
    targets: Sequence[str],
    maps: dict[str, list[tuple[list[str], list[str], np.ndarray]]],
    samples: int = 1000,
) -> dict[str, Any]:
    """{"n_sentences", "chance", "methods": {name: {"top1": {mean, ci95}, "drop_ratio": {mean, ci95}}}}
    for each map (``translator_maps`` output per method name), intervals over sentences."""
    src_ids, tgt_ids = translator.pair_ids(sources, targets)
    top1: dict[str, list[float]] = {name: [] for name in maps}
    ratio: dict[str, list[float]] = {name: [] for name in maps}
    chance = []
    for n, (src, tgt) in enumerate(zip(src_ids, tgt_ids)):
        if not src:
            continue
        drops, groups = erasure_drops(translator, src, tgt)
        best = drops.argmax(1)
        positive = drops.max(1) > 0
        chance.append(1.0 / len(groups))
        for name, per_pair in maps.items():
            words = np.stack([per_pair[n][2][:, g].sum(1) for g in groups], 1)  # (T, W)
            chosen = words.argmax(1)
            top1[name].append(float((chosen == best).mean()))
            picked = np.clip(drops[np.arange(len(chosen)), chosen][positive] / drops.max(1)[positive], 0, 1)
            if picked.size:
                ratio[name].append(float(picked.mean()))

    def summary(values: list[float]) -> dict[str, Any]:
        lo, hi = bootstrap_interval(np.array(values), samples)
        return {"mean": round(float(np.mean(values)), 4), "ci95": [round(lo, 4), round(hi, 4)]}

    return {
        "n_sentences": len(chance),
        "chance": round(float(np.mean(chance)), 4),
        "methods": {name: {"top1": summary(top1[name]), "drop_ratio": summary(ratio[name])} for name in maps},
    }
