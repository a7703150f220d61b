"""What both searches share: hypotheses and per-sentence length limits."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor


@dataclass
class Hypothesis:
    """One decoded sentence. Shapes: tokens (T,) without BOS/EOS; attention (T + 1, S) incl. EOS row."""

    tokens: list[int]
    score: float
    attention: Tensor


def max_lengths(src_mask: Tensor, ratio: float, extra: int) -> Tensor:
    """Per-sentence output limits ``ratio * source length + extra``, so a sentence's output never
    depends on the other sentences in its batch. Shapes: src_mask (B, S) -> (B,)."""
    return (src_mask.sum(1).float() * ratio).long() + extra


def length_penalty(length: Tensor, alpha: float) -> Tensor:
    """GNMT length penalty ((5 + |Y|) / 6) ** alpha (Wu et al. 2016, eq. 14)."""
    return ((5.0 + length.float()) / 6.0) ** alpha


def forbid(log_probs: Tensor, token: int) -> Tensor:
    out = log_probs.clone()
    out[:, token] = float("-inf")
    return out


def only(log_probs: Tensor, token: int, rows: Tensor) -> Tensor:
    """Force ``token`` on ``rows`` (bool (B,)): every other token gets -inf there."""
    forced = torch.full_like(log_probs, float("-inf"))
    forced[:, token] = 0.0
    return torch.where(rows.unsqueeze(1), forced, log_probs)
