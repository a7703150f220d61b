"""Batched greedy search; finished sentences leave the batch, so stragglers run alone."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from ..data.tokenizer import BOS
from .common import Hypothesis, force_eos, max_lengths, output_vocabulary


@torch.no_grad()
def greedy_search(
    model: Any, src: Tensor, src_mask: Tensor, max_ratio: float = 1.5, max_extra: int = 10
) -> list[Hypothesis]:
    """Pick the most probable token at each step until EOS or the sentence's length limit.

    Shapes: src (B, S), src_mask (B, S) -> B hypotheses, attention (T + 1, S_i) each (on the CPU).
    """
    batch, src_len = src.shape
    ids, eos = output_vocabulary(model)
    limits = max_lengths(src_mask, max_ratio, max_extra)  # (B,)
    steps = int(limits.max()) + 1
    on = src.device  # everything is allocated where the source is (CPU or GPU)
    tokens = torch.full((batch, steps), eos, dtype=torch.long, device=on)  # output-vocabulary indices
    attention = torch.zeros(batch, steps, src_len, device=on)
    score = torch.zeros(batch, device=on)
    active = torch.arange(batch, device=on)  # original sentence of each row still decoding
    state = model.encode(src, src_mask)
    prev = torch.full((batch, 1), BOS, dtype=torch.long, device=on)
    for t in range(steps):
        log_probs, state, attn = model.step(prev, state)  # (b, V_out), ..., (b, 1, S)
        best_lp, best = force_eos(log_probs, eos, limits[active] <= t).max(-1)
        tokens[active, t], attention[active, t], score[active] = best, attn[:, 0], score[active] + best_lp
        going = best != eos
        if not bool(going.any()):
            break
        if not bool(going.all()):
            keep = going.nonzero().squeeze(1)
            state, active, best = state.reorder(keep), active[keep], best[keep]
        prev = ids[best].unsqueeze(1)
    lengths = (tokens == eos).int().argmax(1).tolist()
    real = src_mask.sum(1).tolist()
    tokens, score, attention = ids[tokens].cpu(), score.cpu(), attention.float().cpu()
    return [
        Hypothesis(tokens[i, :n].tolist(), float(score[i]), attention[i, : n + 1, : real[i]].clone())
        for i, n in enumerate(lengths)
    ]
