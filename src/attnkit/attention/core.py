"""Masking, numerically stable softmax and the weighted sum: the one step every mechanism shares.

Masks are bool with True = may attend (the convention of
``torch.nn.functional.scaled_dot_product_attention``). A query whose keys are all masked gets
zero weights and a zero context, never NaN.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor


@dataclass
class AttentionOutput:
    """What an attention step returns.

    Shapes:
        context: (B, T, Dv) (or (B, H, T, Dv) inside multi-head attention)
        weights: (B, T, S) (or (B, H, T, S)); None when not requested
    """

    context: Tensor
    weights: Tensor | None

    def __iter__(self):  # type: ignore[no-untyped-def]
        """Unpacks as ``context, weights``, the tutorial's return convention."""
        return iter((self.context, self.weights))


def check_rank(name: str, tensor: Tensor, expected: str) -> None:
    """Raise ValueError unless ``tensor`` has as many dims as the letters in ``expected``."""
    letters = expected.strip("()").split(", ")
    if tensor.dim() != len(letters):
        raise ValueError(
            f"{name}: expected shape {expected} ({len(letters)} dims), got {tuple(tensor.shape)}"
        )


def check_same(name_a: str, size_a: int, name_b: str, size_b: int) -> None:
    """Raise ValueError naming both sizes when two dimensions that must agree differ."""
    if size_a != size_b:
        raise ValueError(f"{name_a} ({size_a}) must equal {name_b} ({size_b})")


def key_padding_to_attn_mask(key_padding_mask: Tensor) -> Tensor:
    """Convert ``nn.MultiheadAttention``'s key_padding_mask (True = ignore) to ours (True = attend).

    The single place where mask polarity is converted.

    Shapes:
        key_padding_mask: (B, S) -> mask (B, 1, S), broadcastable to scores (B, T, S)
    """
    return (~key_padding_mask.bool()).unsqueeze(1)


def lengths_to_mask(lengths: Tensor, max_len: int | None = None) -> Tensor:
    """Boolean padding mask from lengths. Shapes: lengths (B,) -> mask (B, S), True = real token."""
    size = int(lengths.max()) if max_len is None else max_len
    return torch.arange(size, device=lengths.device).unsqueeze(0) < lengths.unsqueeze(1)


def masked_softmax(
    scores: Tensor, mask: Tensor | None = None, temperature: float = 1.0, dim: int = -1
) -> Tensor:
    """Softmax over ``dim`` that ignores masked positions and never overflows.

    ``softmax(scores / temperature)`` with masked positions at exactly 0; a row with every
    position masked is all zeros. Masked scores are filled with the dtype's most negative finite
    value (not -inf), so a fully masked row never produces NaN, in the forward pass or in the
    gradient; multiplying by the mask then zeroes such a row.

    Shapes:
        scores: (..., S); mask: bool, broadcastable to scores, True = keep -> weights like scores
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    if temperature != 1.0:
        scores = scores / temperature
    if mask is None:
        return torch.softmax(scores, dim=dim)
    if mask.dtype != torch.bool:
        raise ValueError(f"mask must be bool (True = may attend), got dtype {mask.dtype}")
    filled = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(filled, dim=dim)
    # Only a row with every key masked needs zeroing (softmax made it uniform); skip the pass otherwise.
    return weights if bool(mask.any(dim).all()) else weights * mask


def attend(
    scores: Tensor,
    values: Tensor,
    mask: Tensor | None = None,
    temperature: float = 1.0,
    dropout: float = 0.0,
    training: bool = False,
) -> AttentionOutput:
    """Mask + stable softmax + (dropout) + weighted sum of values.

    Dropout on the weights uses inverted dropout (kept weights are rescaled by 1/(1-p)) and is
    active only when ``training`` is True; the returned weights are the ones before dropout.

    Shapes:
        scores: (B, T, S) or (B, H, T, S); values: (B, S, Dv) or (B, H, S, Dv);
        mask: bool broadcastable to scores -> context (B, [H,] T, Dv), weights like scores
    """
    if scores.shape[-1] != values.shape[-2]:
        raise ValueError(
            f"scores (..., T, S) and values (..., S, Dv) disagree on S: "
            f"scores {tuple(scores.shape)}, values {tuple(values.shape)}"
        )
    weights = masked_softmax(scores, mask, temperature)
    used = F.dropout(weights, p=dropout, training=True) if training and dropout > 0 else weights
    return AttentionOutput(context=torch.matmul(used, values), weights=weights)


def attention_entropy(weights: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """Entropy of attention distributions in nats, padding excluded.

    ``H = -sum_s w_s log w_s`` per query (0 log 0 = 0). Rows whose query is padding (``mask``
    False) or whose weights are all zero are excluded from the mean.

    Shapes:
        weights: (..., T, S); mask: bool (..., T) marking real queries, or None
        -> per_query (..., T), mean () averaged over real queries
    """
    logs = torch.where(weights > 0, weights.clamp_min(1e-30).log(), torch.zeros_like(weights))
    per_query = -(weights * logs).sum(-1)
    real = weights.sum(-1) > 0
    if mask is not None:
        real = real & mask.bool()
    count = real.sum()
    mean = (per_query * real).sum() / count.clamp_min(1)
    return per_query * real, mean
