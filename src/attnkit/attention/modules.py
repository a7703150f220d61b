"""The tutorial's attention classes, done right: batched, masked, stable, trainable.

Every class here is a thin composition of a scorer (``scorers.py``) and ``attend`` (``core.py``);
none keeps attention weights on the module: they are returned.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from .core import AttentionOutput, attend, check_rank, check_same, masked_softmax
from .multihead import causal_mask
from .positional import SinusoidalPositionalEncoding
from .scorers import build_scorer


def _query_3d(query: Tensor) -> tuple[Tensor, bool]:
    """Accept a single query (B, D) or queries (B, T, D); return (B, T, D) and whether it was 2-D."""
    if query.dim() == 2:
        return query.unsqueeze(1), True
    check_rank("query", query, "(B, T, D)")
    return query, False


def _mask_3d(mask: Tensor | None, batch: int, src_len: int) -> Tensor | None:
    """Key padding (B, S) -> (B, 1, S); (B, T, S) and (T, S) pass through. Validates S."""
    if mask is None:
        return None
    if mask.dtype != torch.bool:
        raise ValueError(f"mask must be bool (True = may attend), got dtype {mask.dtype}")
    if mask.shape[-1] != src_len:
        raise ValueError(f"mask last dim must be S={src_len}, got mask shape {tuple(mask.shape)}")
    return mask.unsqueeze(1) if mask.dim() == 2 and mask.shape[0] == batch else mask


class Attention(nn.Module):
    """Scorer-based attention: ``weights = softmax(score(q, K) / temperature)``, ``context = weights V``.

    Args:
        scorer: a registered scorer name (``attnkit.attention.SCORERS.names()``).
        query_size, key_size: Dq and Dk. temperature: softmax temperature (> 0).

    Shapes:
        query (B, Dq) or (B, T, Dq); keys (B, S, Dk); values (B, S, Dv) (default: keys);
        mask bool (B, S) or (B, T, S), True = may attend
        -> context (B, Dv) / (B, T, Dv), weights (B, S) / (B, T, S)
    """

    def __init__(
        self,
        scorer: str,
        query_size: int,
        key_size: int | None = None,
        temperature: float = 1.0,
        dropout: float = 0.0,
        **scorer_options: int,
    ) -> None:
        super().__init__()
        if temperature <= 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        self.scorer = build_scorer(scorer, query_size, key_size, **scorer_options)
        self.temperature = temperature
        self.dropout = dropout

    def precompute(self, keys: Tensor) -> Tensor | None:
        """Key projections to pass back as ``keys_proj`` at each decoder step."""
        return self.scorer.precompute(keys)

    def forward(
        self,
        query: Tensor,
        keys: Tensor,
        values: Tensor | None = None,
        mask: Tensor | None = None,
        keys_proj: Tensor | None = None,
    ) -> AttentionOutput:
        query3, single = _query_3d(query)
        check_rank("keys", keys, "(B, S, Dk)")
        values = keys if values is None else values
        check_rank("values", values, "(B, S, Dv)")
        check_same("values length S", values.shape[1], "keys length S", keys.shape[1])
        scores = self.scorer(query3, keys, keys_proj)  # (B, T, S)
        mask3 = _mask_3d(mask, keys.shape[0], keys.shape[1])
        out = attend(scores, values, mask3, self.temperature, self.dropout, self.training)
        if single:
            assert out.weights is not None
            return AttentionOutput(out.context.squeeze(1), out.weights.squeeze(1))
        return out


class BahdanauAttention(Attention):
    """Additive attention (Bahdanau et al. 2015): ``v^T tanh(W1 h_s + W2 s_t)``.

    ``BahdanauAttention(hidden_size)(decoder_hidden (B, D), encoder_outputs (B, S, D))``
    returns ``(context (B, D), weights (B, S))`` (an AttentionOutput, which also unpacks).
    """

    def __init__(self, hidden_size: int, key_size: int | None = None, temperature: float = 1.0) -> None:
        super().__init__("additive", hidden_size, key_size, temperature)


class LuongAttention(Attention):
    """Multiplicative attention (Luong et al. 2015) with ``method`` in 'dot', 'general', 'concat'.

    Same call as BahdanauAttention: (B, D) or (B, T, D) queries over (B, S, D) encoder outputs.
    """

    def __init__(
        self, hidden_size: int, method: str = "general", key_size: int | None = None, temperature: float = 1.0
    ) -> None:
        if method not in ("dot", "general", "concat"):
            raise ValueError(f"unknown Luong method {method!r}; valid: concat, dot, general")
        super().__init__(method, hidden_size, key_size, temperature)
        self.method = method


def scaled_dot_product_attention(
    query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None, temperature: float = 1.0
) -> tuple[Tensor, Tensor]:
    """``softmax(Q K^T / (sqrt(Dk) * temperature)) V`` (Vaswani et al. 2017, eq. 1), eager.

    Shapes:
        query (..., T, Dk), key (..., S, Dk), value (..., S, Dv), mask bool broadcastable to
        (..., T, S), True = may attend -> output (..., T, Dv), weights (..., T, S)
    """
    if query.dim() < 2 or key.dim() != query.dim() or value.dim() != query.dim():
        raise ValueError(
            "expected query (..., T, Dk), key (..., S, Dk), value (..., S, Dv) of equal rank, got "
            f"{tuple(query.shape)}, {tuple(key.shape)}, {tuple(value.shape)}"
        )
    check_same("query width Dk", query.shape[-1], "key width Dk", key.shape[-1])
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.shape[-1])
    out = attend(scores, value, mask, temperature)
    assert out.weights is not None
    return out.context, out.weights


def calculate_attention_weights(
    query: Tensor, keys: Tensor, temperature: float = 1.0, mask: Tensor | None = None
) -> Tensor:
    """The tutorial's dot-product weights with temperature: ``softmax(q . k_s / temperature)``.

    Higher temperature flattens the distribution, lower sharpens it.

    Shapes: query (B, D) or (B, T, D), keys (B, S, D), mask (B, S) -> weights (B, S) or (B, T, S)
    """
    query3, single = _query_3d(query)
    check_rank("keys", keys, "(B, S, D)")
    check_same("query width D", query3.shape[-1], "keys width D", keys.shape[-1])
    scores = torch.bmm(query3, keys.transpose(1, 2))  # (B, T, S)
    weights = masked_softmax(scores, _mask_3d(mask, keys.shape[0], keys.shape[1]), temperature)
    return weights.squeeze(1) if single else weights


class CrossAttention(nn.Module):
    """Single-head projected attention between two sequences (queries from one, keys/values from another).

    ``softmax(Q W_q (K W_k)^T / sqrt(D)) V W_v``, then an output projection W_o.

    Shapes:
        query (B, T, D), key (B, S, D), value (B, S, D), mask bool (B, S), (B, T, S) or (T, S)
        -> output (B, T, D), weights (B, T, S)
    """

    def __init__(self, hidden_size: int, dropout_rate: float = 0.0, output_projection: bool = True) -> None:
        super().__init__()
        self.hidden_size = hidden_size
        self.dropout_rate = dropout_rate
        self.query_proj = nn.Linear(hidden_size, hidden_size)
        self.key_proj = nn.Linear(hidden_size, hidden_size)
        self.value_proj = nn.Linear(hidden_size, hidden_size)
        self.out_proj = nn.Linear(hidden_size, hidden_size) if output_projection else nn.Identity()

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        for name, x in (("query", query), ("key", key), ("value", value)):
            check_rank(name, x, "(B, L, D)")
            check_same(f"{name} width D", x.shape[-1], "hidden_size", self.hidden_size)
        check_same("key length S", key.shape[1], "value length S", value.shape[1])
        q = self.query_proj(query)  # (B, T, D)
        k = self.key_proj(key)  # (B, S, D)
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(self.hidden_size)  # (B, T, S)
        out = attend(
            scores,
            self.value_proj(value),
            _mask_3d(mask, key.shape[0], key.shape[1]),
            dropout=self.dropout_rate,
            training=self.training,
        )
        assert out.weights is not None
        return self.out_proj(out.context), out.weights


class SelfAttention(CrossAttention):
    """A sequence attending to itself: CrossAttention with query = key = value = x.

    Dropout on the weights is inverted dropout (rescaled), in training only. ``causal=True``
    lets position t see only positions <= t.

    Shapes: x (B, T, D), mask bool (B, T) or (B, T, T) -> output (B, T, D), weights (B, T, T)
    """

    def __init__(self, hidden_size: int, dropout_rate: float = 0.1, causal: bool = False) -> None:
        super().__init__(hidden_size, dropout_rate, output_projection=False)
        self.causal = causal

    def forward(  # type: ignore[override]
        self, x: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        check_rank("x", x, "(B, T, D)")
        if self.causal:
            causal = causal_mask(x.shape[1], x.device)
            padding = _mask_3d(mask, x.shape[0], x.shape[1])
            mask = causal if padding is None else padding & causal
        return super().forward(x, x, x, mask)


class PositionAwareAttention(CrossAttention):
    """Cross-attention whose keys carry their position: ``K' = K + PE(positions) W_p``.

    Sinusoidal encodings are computed for any length (no fixed max_length); ``positions``
    (B, S) or (S,) overrides the default 0..S-1.

    Shapes: query (B, T, D), key (B, S, D), value (B, S, D) -> output (B, T, D), weights (B, T, S)
    """

    def __init__(self, hidden_size: int, dropout_rate: float = 0.0) -> None:
        super().__init__(hidden_size, dropout_rate)
        self.position_encoding = SinusoidalPositionalEncoding(hidden_size)
        self.position_proj = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(  # type: ignore[override]
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        mask: Tensor | None = None,
        positions: Tensor | None = None,
    ) -> tuple[Tensor, Tensor]:
        check_rank("key", key, "(B, S, D)")
        if positions is None:
            table = self.position_encoding.encodings(key.shape[1]).to(key.dtype)  # (S, D)
        else:
            top = int(positions.max()) + 1
            table = self.position_encoding.encodings(top).to(key.dtype)[positions]  # (S, D) or (B, S, D)
        key = key + self.position_proj(table)
        return super().forward(query, key, value, mask)
