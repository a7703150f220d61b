"""The HMM alignment model behind the lexical tables (Vogel et al. 1996; null states as in Och and Ney
2003): a target word's source position depends on the previous one by the jump between them, and a null
state after each position emits words that align to nothing.

States of a pair with S source words: 0..S-1 the source positions, S + k "null after position k" (the
next jump counts from k). Jumps are clipped to [-JUMP, JUMP]. EM runs over batches of pairs with the
same source length at once: emissions (B, T, 2S), one (2S, 2S) transition matrix per length.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

JUMP = 7  # jumps clipped to [-7, 7]
NULL = 0.2  # probability of the null state at each step (the trial set's choice among 0.1, 0.2, 0.3)
BATCH = 2000  # pairs per forward-backward batch during training
MAX_SOURCE = 80  # longer sources get IBM Model 1's posteriors (a 2,000-word pair: 64 GFLOP here)


def transitions(s: int, jumps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (2S, 2S) transition matrix and the (2S,) initial distribution of a pair with s source words."""
    i = np.arange(s)
    real = jumps[np.clip(i[None, :] - i[:, None], -JUMP, JUMP) + JUMP]  # from k (row) to i (column)
    real = real / real.sum(1, keepdims=True) * (1 - NULL)
    matrix = np.zeros((2 * s, 2 * s))
    matrix[:s, :s] = matrix[s:, :s] = real  # from the null after k as from k
    matrix[i, s + i] = matrix[s + i, s + i] = NULL
    first = jumps[np.clip(i + 1, -JUMP, JUMP) + JUMP]  # from a position before the first
    start = np.concatenate([first / first.sum() * (1 - NULL), np.full(s, NULL / s)])
    return matrix, start


def forward_backward(
    emissions: np.ndarray, matrix: np.ndarray, start: np.ndarray, mask: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Scaled forward-backward. emissions (B, T, N), mask (B, T) of real target words (a prefix) ->
    state posteriors (B, T, N) (zero at padding) and expected transition counts (N, N), summed."""
    b, t_len, n = emissions.shape
    alpha, scale = np.zeros((b, t_len, n)), np.ones((b, t_len))
    a = start[None, :] * emissions[:, 0]
    scale[:, 0] = a.sum(1)
    alpha[:, 0] = a / scale[:, 0:1]
    for t in range(1, t_len):
        a = (alpha[:, t - 1] @ matrix) * emissions[:, t]
        total = a.sum(1)
        live = mask[:, t]
        alpha[:, t] = np.where(live[:, None], a / np.maximum(total, 1e-300)[:, None], alpha[:, t - 1])
        scale[:, t] = np.where(live, total, 1.0)
    beta, moves = np.ones((b, t_len, n)), np.zeros((n, n))
    for t in range(t_len - 2, -1, -1):
        live = mask[:, t + 1][:, None]
        ahead = emissions[:, t + 1] * beta[:, t + 1] / scale[:, t + 1][:, None] * live
        beta[:, t] = np.where(live, ahead @ matrix.T, beta[:, t + 1])
        moves += matrix * (alpha[:, t].T @ ahead)
    gamma = alpha * beta
    gamma /= gamma.sum(2, keepdims=True)
    return gamma * mask[:, :, None], moves


def train(
    s_ids: Sequence[np.ndarray],
    t_ids: Sequence[np.ndarray],
    keys: np.ndarray,
    probs: np.ndarray,
    n_target: int,
    iterations: int = 4,
) -> tuple[np.ndarray, np.ndarray]:
    """EM of the HMM from IBM Model 1's table: per pair the source ids with null (0) first and the
    target ids; the table as sorted ``keys`` (source * n_target + target) and ``probs``. -> new probs,
    jump weights (2 JUMP + 1,)."""
    jumps = np.ones(2 * JUMP + 1)
    by_length: dict[int, list[int]] = {}
    for n, (source, target) in enumerate(zip(s_ids, t_ids)):
        if len(source) > 1 and len(target):
            by_length.setdefault(len(source) - 1, []).append(n)
    for _ in range(iterations):
        counts, moved = np.zeros(len(keys)), np.zeros(2 * JUMP + 1)
        for s, members in by_length.items():
            for start in range(0, len(members), BATCH):
                chunk = members[start : start + BATCH]
                found, at, mask, gamma, moves = _batch(s_ids, t_ids, chunk, s, keys, probs, n_target, jumps)
                np.add.at(counts, at[:, :, 1:][found[:, :, 1:]], gamma[:, :, :s][found[:, :, 1:]])
                null = gamma[:, :, s:].sum(2)
                np.add.at(counts, at[:, :, 0][found[:, :, 0]], null[found[:, :, 0]])
                i = np.arange(s)
                np.add.at(moved, (np.clip(i[None, :] - i[:, None], -JUMP, JUMP) + JUMP).ravel(),
                          (moves[:s, :s] + moves[s:, :s]).ravel())  # fmt: skip
        source = keys // n_target
        probs = np.maximum(counts / np.maximum(np.bincount(source, counts)[source], 1e-300), 1e-9)
        jumps = moved / moved.sum() + 1e-6
    return probs, jumps


def _batch(s_ids, t_ids, chunk, s, keys, probs, n_target, jumps):  # type: ignore[no-untyped-def]
    """Forward-backward over the pairs ``chunk`` (all with s source words)."""
    t_len = max(len(t_ids[n]) for n in chunk)
    src = np.stack([s_ids[n] for n in chunk])  # (B, s + 1)
    tgt = np.full((len(chunk), t_len), -1, dtype=np.int64)
    for row, n in enumerate(chunk):
        tgt[row, : len(t_ids[n])] = t_ids[n]
    mask = tgt >= 0
    wanted = src[:, None, :] * n_target + np.maximum(tgt, 0)[:, :, None]  # (B, T, s + 1)
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    found = (keys[at] == wanted) & mask[:, :, None]
    table = np.where(found, probs[at], 1e-7)
    emissions = np.concatenate([table[:, :, 1:], np.repeat(table[:, :, :1], s, 2)], 2)
    matrix, start = transitions(s, jumps)
    gamma, moves = forward_backward(emissions, matrix, start, mask)
    return found, at, mask, gamma, moves


def posteriors(tables: Sequence[np.ndarray], jumps: np.ndarray) -> list[np.ndarray]:
    """Pairs' alignment posteriors (T_i, S) from their emission tables (T_i, S + 1), column 0 the null
    word; every pair has the same S >= 1 and T_i >= 1 (one forward-backward over them all)."""
    s, t_len = tables[0].shape[1] - 1, max(t.shape[0] for t in tables)
    padded = np.ones((len(tables), t_len, s + 1))
    mask = np.zeros((len(tables), t_len), dtype=bool)
    for row, table in enumerate(tables):
        padded[row, : len(table)], mask[row, : len(table)] = table, True
    emissions = np.concatenate([padded[:, :, 1:], np.repeat(padded[:, :, :1], s, 2)], 2)
    matrix, start = transitions(s, jumps)
    gamma, _ = forward_backward(emissions, matrix, start, mask)
    return [gamma[row, : len(table), :s] for row, table in enumerate(tables)]
