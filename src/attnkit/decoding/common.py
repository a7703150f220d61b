"""What both searches share: hypotheses, length limits, the output vocabulary, forced EOS."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from torch import Tensor

from ..data.tokenizer import EOS


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


def length_penalty(length: int, alpha: float) -> float:
    """GNMT length penalty ((5 + |Y|) / 6) ** alpha (Wu et al. 2016, eq. 14)."""
    return float(((5.0 + length) / 6.0) ** alpha)


def output_vocabulary(model: Any) -> tuple[Tensor, int]:
    """The ids the model's log-probabilities range over (V_out,) and the index of EOS among them.

    Searching in this space (not the full joint vocabulary) makes every step's softmax and top-k
    smaller; indices map back to token ids through it."""
    ids = model.output.target_ids
    where = (ids == EOS).nonzero()
    if where.numel() != 1:
        raise ValueError("the model's output vocabulary has no </s>")
    return ids, int(where[0, 0])


def force_eos(log_probs: Tensor, eos: int, rows: Tensor) -> Tensor:
    """Only EOS is possible on ``rows`` (bool (B,)): the sentences at their length limit."""
    if bool(rows.any()):
        log_probs = log_probs.masked_fill(rows.unsqueeze(1), float("-inf"))
        log_probs[rows, eos] = 0.0
    return log_probs
