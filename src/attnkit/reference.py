"""The attention math in plain NumPy float64, forward only: the tests' oracle.

Written for reading, not speed. Masks are bool, True = may attend.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


def softmax(scores: Array, mask: NDArray[np.bool_] | None = None, temperature: float = 1.0) -> Array:
    """Stable masked softmax over the last axis; fully masked rows are all zeros."""
    scores = np.asarray(scores, dtype=np.float64) / temperature
    if mask is not None:
        mask = np.broadcast_to(mask, scores.shape)
        scores = np.where(mask, scores, -np.inf)
    top = np.max(scores, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    exp = np.exp(scores - top)
    total = exp.sum(axis=-1, keepdims=True)
    return np.divide(exp, total, out=np.zeros_like(exp), where=total > 0)


def attend(
    scores: Array, values: Array, mask: NDArray[np.bool_] | None = None, temperature: float = 1.0
) -> tuple[Array, Array]:
    """scores (..., T, S), values (..., S, Dv) -> context (..., T, Dv), weights (..., T, S)."""
    weights = softmax(scores, mask, temperature)
    return weights @ values, weights


def dot_scores(query: Array, keys: Array) -> Array:
    """Luong dot. query (B, T, D), keys (B, S, D) -> (B, T, S)."""
    return query @ keys.transpose(0, 2, 1)


def scaled_dot_scores(query: Array, keys: Array) -> Array:
    """Vaswani scaled dot product. -> (B, T, S)."""
    return dot_scores(query, keys) / np.sqrt(keys.shape[-1])


def general_scores(query: Array, keys: Array, w: Array) -> Array:
    """Luong general q^T W k, W (Dq, Dk) as stored by nn.Linear(Dk, Dq). -> (B, T, S)."""
    return query @ (keys @ w.T).transpose(0, 2, 1)


def additive_scores(query: Array, keys: Array, w_q: Array, w_k: Array, v: Array) -> Array:
    """Bahdanau v^T tanh(W_q q + W_k k); w_q (A, Dq), w_k (A, Dk), v (1, A). -> (B, T, S)."""
    hidden = np.tanh((query @ w_q.T)[:, :, None, :] + (keys @ w_k.T)[:, None, :, :])
    return (hidden @ v.T)[..., 0]


def location_scores(query: Array, w: Array, b: Array, positions: Array) -> Array:
    """Luong location: (W q + b) . p_s over positions (S, Dq). -> (B, T, S)."""
    return (query @ w.T + b) @ positions.T


def multi_head(
    query: Array,
    key: Array,
    value: Array,
    params: dict[str, Array],
    num_heads: int,
    mask: NDArray[np.bool_] | None = None,
) -> tuple[Array, Array]:
    """Multi-head attention with params w_q, b_q, w_k, b_k, w_v, b_v, w_o, b_o (nn.Linear layout).

    query (B, T, D), key/value (B, S, D), mask broadcastable to (B, H, T, S)
    -> output (B, T, D), weights (B, H, T, S)
    """

    def split(x: Array) -> Array:
        b, n, d = x.shape
        return x.reshape(b, n, num_heads, d // num_heads).transpose(0, 2, 1, 3)

    q = split(query @ params["w_q"].T + params["b_q"])
    k = split(key @ params["w_k"].T + params["b_k"])
    v = split(value @ params["w_v"].T + params["b_v"])
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1])
    context, weights = attend(scores, v, mask)
    b, _, t, _ = context.shape
    merged = context.transpose(0, 2, 1, 3).reshape(b, t, -1)
    return merged @ params["w_o"].T + params["b_o"], weights


def attention_pooling(
    states: Array, w: Array, b: Array, u: Array, mask: NDArray[np.bool_] | None = None
) -> tuple[Array, Array]:
    """HAN pooling: a = softmax(tanh(W h + b) . u). states (B, L, D) -> (B, D), (B, L)."""
    weights = softmax(np.tanh(states @ w.T + b) @ u, mask)
    return (weights[:, :, None] * states).sum(axis=1), weights


def sinusoidal(length: int, dim: int) -> Array:
    """Sinusoidal positional encodings (length, dim)."""
    pos = np.arange(length)[:, None]
    inv = np.exp(np.arange(0, dim, 2) * -(np.log(10000.0) / dim))
    table = np.zeros((length, dim))
    table[:, 0::2], table[:, 1::2] = np.sin(pos * inv), np.cos(pos * inv)
    return table


def entropy(weights: Array) -> Array:
    """Per-row entropy in nats, 0 log 0 = 0. weights (..., S) -> (...)."""
    logs = np.log(np.where(weights > 0, weights, 1.0))
    return -(weights * logs).sum(axis=-1)
