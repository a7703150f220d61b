"""Multi-head attention (Vaswani et al. 2017, sec. 3.2.2), batch-first, with a fused fast path.

``MultiHead(Q, K, V) = Concat(head_1..head_H) W_O``,
``head_h = softmax(Q W_Q^h (K W_K^h)^T / sqrt(Dh)) V W_V^h``.

When weights are not requested the fused ``torch.nn.functional.scaled_dot_product_attention``
runs; when they are, the eager path (``attend``) runs and returns per-head weights (B, H, T, S).
A test keeps the two equal, and equal to ``torch.nn.MultiheadAttention`` given the same weights.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .core import attend, check_rank, check_same


@dataclass
class KeyValue:
    """Projected keys and values, cached across decoder steps. Shapes: key, value (B, H, S, Dh)."""

    key: Tensor
    value: Tensor

    def append(self, other: KeyValue) -> KeyValue:
        return KeyValue(torch.cat([self.key, other.key], 2), torch.cat([self.value, other.value], 2))


def causal_mask(length: int, device: torch.device | None = None, offset: int = 0) -> Tensor:
    """Bool mask letting query t attend to keys 0..t+offset. Shapes: -> (T, T + offset)."""
    rows = torch.arange(length, device=device).unsqueeze(1) + offset
    return torch.arange(length + offset, device=device).unsqueeze(0) <= rows


class MultiHeadAttention(nn.Module):
    """Multi-head attention for self- and cross-attention.

    Args:
        d_model: D, the width of queries, keys, values and output.
        num_heads: H; D must be divisible by H (Dh = D / H).
        dropout: dropout on attention weights, in training only.
        kdim, vdim: widths of keys and values when they differ from D (cross-attention).

    Shapes:
        query (B, T, D), key (B, S, Dk), value (B, S, Dv),
        mask: bool, True = may attend, broadcastable to (B, H, T, S) (e.g. (B, 1, S) key padding,
        (T, S) causal, (B, T, S)) -> output (B, T, D), weights (B, H, T, S) or None
    """

    def __init__(
        self,
        d_model: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        kdim: int | None = None,
        vdim: int | None = None,
    ) -> None:
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by num_heads ({num_heads})")
        self.d_model, self.num_heads, self.head_dim = d_model, num_heads, d_model // num_heads
        self.dropout = dropout
        self.kdim, self.vdim = kdim or d_model, vdim or d_model
        self.query_proj = nn.Linear(d_model, d_model, bias=bias)
        self.key_proj = nn.Linear(self.kdim, d_model, bias=bias)
        self.value_proj = nn.Linear(self.vdim, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        # (H,) multipliers of the heads' outputs, or (B, H) one row per batch row; None = all heads
        # (``evaluation.heads`` masks with it)
        self.head_gate: Tensor | None = None

    def _split(self, x: Tensor) -> Tensor:
        batch, length, _ = x.shape
        return x.view(batch, length, self.num_heads, self.head_dim).transpose(1, 2)  # (B, H, L, Dh)

    def project_kv(self, key: Tensor, value: Tensor) -> KeyValue:
        """Project and split keys and values once (for caching). Shapes: -> (B, H, S, Dh)."""
        check_rank("key", key, "(B, S, Dk)")
        check_rank("value", value, "(B, S, Dv)")
        check_same("key width", key.shape[-1], "kdim", self.kdim)
        check_same("value width", value.shape[-1], "vdim", self.vdim)
        return KeyValue(self._split(self.key_proj(key)), self._split(self.value_proj(value)))

    def forward(
        self,
        query: Tensor,
        key: Tensor | None = None,
        value: Tensor | None = None,
        mask: Tensor | None = None,
        need_weights: bool = True,
        kv: KeyValue | None = None,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """Returns ``(output (B, T, D), weights (B, H, T, S) or None)``.

        Pass ``kv`` (from ``project_kv``) instead of key/value to reuse projected keys.
        ``is_causal`` adds a causal mask (query t sees keys <= t); it needs T == S.
        """
        check_rank("query", query, "(B, T, D)")
        check_same("query width", query.shape[-1], "d_model", self.d_model)
        if kv is None:
            if key is None or value is None:
                raise ValueError("pass key and value, or kv=project_kv(key, value)")
            check_same("key batch B", key.shape[0], "query batch B", query.shape[0])
            kv = self.project_kv(key, value)
        batch, length, _ = query.shape
        q = self._split(self.query_proj(query))  # (B, H, T, Dh)
        mask = self._full_mask(mask, is_causal, length, kv.key.shape[2], query.device)
        if need_weights:
            # Scale the (B, H, T, Dh) queries, not the (B, H, T, S) scores: one pass over less memory.
            scores = torch.matmul(q * self.head_dim**-0.5, kv.key.transpose(-2, -1))  # (B, H, T, S)
            out = attend(scores, kv.value, mask, dropout=self.dropout, training=self.training)
            context, weights = out.context, out.weights
        else:
            # The fused kernel gives zero output for fully masked rows in this torch (checked by a test).
            drop = self.dropout if self.training else 0.0
            context = F.scaled_dot_product_attention(q, kv.key, kv.value, attn_mask=mask, dropout_p=drop)
            weights = None
        if self.head_gate is not None:
            gate = self.head_gate
            context = context * gate.view(gate.shape[0] if gate.dim() == 2 else 1, -1, 1, 1)
        merged = context.transpose(1, 2).reshape(batch, length, self.d_model)  # (B, T, D)
        return self.out_proj(merged), weights

    def value_outputs(self, value: Tensor) -> Tensor:
        """Each head's projected values through its slice of the output projection, without the bias:
        (B, H, S, Dh) -> f (B, H, S, D), so that ``output = sum_h weights_h @ f_h + out_proj.bias``
        (the vectors Kobayashi et al. 2020 weigh attention by; ``explain.attention_maps``)."""
        per_head = self.out_proj.weight.view(self.d_model, self.num_heads, self.head_dim)  # (D, H, Dh)
        return torch.einsum("bhsk,dhk->bhsd", value, per_head)

    @staticmethod
    def _full_mask(
        mask: Tensor | None, is_causal: bool, length: int, src_len: int, device: torch.device
    ) -> Tensor | None:
        if mask is not None:
            if mask.dtype != torch.bool:
                raise ValueError(f"mask must be bool (True = may attend), got {mask.dtype}")
            if mask.dim() == 3:  # (B, T, S) or (B, 1, S) -> add the head axis
                mask = mask.unsqueeze(1)
        if is_causal:
            if length != src_len:
                raise ValueError(f"is_causal needs T == S, got T={length}, S={src_len}")
            causal = causal_mask(length, device)
            mask = causal if mask is None else mask & causal
        return mask
