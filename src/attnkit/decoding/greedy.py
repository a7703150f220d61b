"""Batched greedy search."""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from ..data.tokenizer import BOS, EOS, PAD
from .common import Hypothesis, forbid, max_lengths, only


@torch.no_grad()
def greedy_search(
    model: Any,
    src: Tensor,
    src_mask: Tensor,
    max_ratio: float = 1.5,
    max_extra: int = 10,
) -> list[Hypothesis]:
    """Pick the most probable token at each step until EOS or the sentence's length limit.

    Shapes: src (B, S), src_mask (B, S) -> B hypotheses, attention (T + 1, S_i) each.
    """
    batch = src.shape[0]
    limits = max_lengths(src_mask, max_ratio, max_extra)  # (B,)
    state = model.encode(src, src_mask)
    prev = torch.full((batch, 1), BOS, dtype=torch.long)
    done = torch.zeros(batch, dtype=torch.bool)
    tokens, maps = [], []
    score = torch.zeros(batch)
    for t in range(int(limits.max()) + 1):
        log_probs, state, attn = model.step(prev, state)
        log_probs = forbid(forbid(log_probs, PAD), BOS)
        log_probs = only(log_probs, EOS, limits <= t)
        best_lp, best = log_probs.max(-1)
        best = torch.where(done, torch.full_like(best, PAD), best)
        score += torch.where(done, torch.zeros_like(best_lp), best_lp)
        tokens.append(best)
        maps.append(attn[:, 0])
        done = done | (best == EOS)
        prev = best.unsqueeze(1)
        if bool(done.all()):
            break
    out_tokens = torch.stack(tokens, 1)  # (B, T)
    attention = torch.stack(maps, 1)  # (B, T, S)
    lengths = src_mask.sum(1)
    results = []
    for i in range(batch):
        row = out_tokens[i].tolist()
        n = row.index(EOS) if EOS in row else len(row)
        results.append(Hypothesis(row[:n], float(score[i]), attention[i, : n + 1, : int(lengths[i])]))
    return results
