"""Maps derived from a model's layered attention: how much each source position feeds a target position.

One interface: a model's attention per layer (and, for some methods, values or gradients) in, one
(T, S) map out, each row a distribution over the S source positions. The model-specific parts that
produce the inputs live in ``explain.translator_maps`` and ``explain.attribution`` (HAN).

- attention: the raw weights of one layer, averaged over heads.
- rollout (Abnar and Zuidema 2020): attention propagated down the layers, the residual connection
  counted as half of every layer (``0.5 A + 0.5 I``); the product of the layers' matrices.
- flow (Abnar and Zuidema 2020): the maximum flow from a target position to each source position in
  the graph whose edge capacities are those matrices (scipy's Dinic on capacities in 1e-6 units).
- norm (Kobayashi et al. 2020): ``|| sum_h alpha^h_tj f^h(x_j) ||``, f the value vector after the
  output projection: what the attention actually moves, not only how much it weighs.
- grad (Chefer et al. 2021, encoder-decoder rules): relevance propagated with
  ``A_bar = mean_h (grad_A * A)^+``, the gradient of the target token's log-probability.
- value_zeroing (Mohebbi et al. 2023): ``1 - cos(y_t, y_t')``, y_t' the layer's output for position t
  when source position j's value vector is zeroed (the weights unchanged).

Encoder-decoder graphs: node sets are the source positions through the encoder, then the target
positions plus the memory (carried unchanged) through the decoder; each decoder layer adds two levels,
self-attention then cross-attention. Rollout and flow read the same matrices (``encoder_decoder_levels``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

FLOW_UNITS = 1_000_000  # capacities are integers for scipy's maximum_flow: 1e-6 resolution


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """Each row divided by its sum (rows summing to 0 stay 0). (..., N) -> (..., N)."""
    total = matrix.sum(-1, keepdims=True)
    return np.where(total > 0, matrix / np.where(total > 0, total, 1.0), 0.0)


def distribution(matrix: np.ndarray) -> np.ndarray:
    """Rows normalized to sum 1; a row with no positive mass (e.g. no positive relevance) is uniform."""
    empty = ~(matrix.sum(-1, keepdims=True) > 0)
    return normalize_rows(np.where(empty, 1.0, matrix))


def residual_mix(weights: np.ndarray) -> np.ndarray:
    """A self-attention layer with its residual connection: 0.5 mean_h A + 0.5 I.
    weights (H, N, N) or (N, N) -> (N, N)."""
    mean = weights.mean(0) if weights.ndim == 3 else weights
    return 0.5 * mean + 0.5 * np.eye(mean.shape[0])


def encoder_decoder_levels(
    encoder: Sequence[np.ndarray], decoder: Sequence[np.ndarray], cross: Sequence[np.ndarray]
) -> list[np.ndarray]:
    """The attention graph of an encoder-decoder as matrices from each level to the one below,
    bottom first. encoder: per layer (H, S, S); decoder: per layer (H, T, T); cross: (H, T, S).
    Levels: S source positions through the encoder, then T targets + S memory nodes."""
    s = encoder[0].shape[-1] if encoder else cross[0].shape[-1]
    t = cross[0].shape[-2]
    levels = [residual_mix(w) for w in encoder]  # (S, S)
    entry = np.zeros((t + s, s))  # target embeddings carry no source: only the memory continues
    entry[t:] = np.eye(s)
    levels.append(entry)
    for self_w, cross_w in zip(decoder, cross):
        mix = np.eye(t + s)
        mix[:t, :t] = residual_mix(self_w)
        levels.append(mix)
        mix = np.eye(t + s)
        mix[:t, :t] = 0.5 * np.eye(t)
        mix[:t, t:] = 0.5 * (cross_w.mean(0) if cross_w.ndim == 3 else cross_w)
        levels.append(mix)
    return levels


def rollout(levels: Sequence[np.ndarray]) -> np.ndarray:
    """The product of the levels' matrices, top level's rows by bottom positions: (N_top, N_0)."""
    out = levels[0]
    for level in levels[1:]:
        out = level @ out
    return out


def layered_flow(
    levels: Sequence[np.ndarray], top: Sequence[int] | None = None, floor: float = 0.0
) -> np.ndarray:
    """Maximum flow from each chosen top-level node to each bottom node, capacities from ``levels``
    (bottom first; level k is (N_{k+1}, N_k), entry (i, j) the capacity of the edge from node i of
    level k+1 down to node j of level k). Returns (len(top), N_0). ``floor`` > 0 drops the edges whose
    capacity is below it: an approximation, many times faster on real attention (benchmarks/attention_flow.py
    measures both)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_flow

    sizes = [levels[0].shape[1]] + [m.shape[0] for m in levels]
    offsets = np.cumsum([0] + sizes)
    rows, cols, caps = [], [], []
    for k, matrix in enumerate(levels):
        units = np.round(np.where(matrix >= floor, matrix, 0.0) * FLOW_UNITS).astype(np.int64)
        i, j = np.nonzero(units > 0)
        rows.append(offsets[k + 1] + i)
        cols.append(offsets[k] + j)
        caps.append(units[i, j])
    n = int(offsets[-1])
    graph = csr_matrix(
        (np.concatenate(caps).astype(np.int32), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)
    )
    chosen = list(range(sizes[-1]) if top is None else top)

    def row(node: int) -> list[float]:
        return [
            maximum_flow(graph, int(offsets[-2] + node), s, method="dinic").flow_value
            for s in range(sizes[0])
        ]

    # rows in parallel threads (scipy's maximum_flow releases the GIL; the graph is only read): the same
    # values; a whole 100-token map of enfr-transformer 20.2 -> 16.4 s on 2 cores
    # (benchmarks/attention_flow.py --full)
    workers = min(len(chosen), _threads())
    if workers > 1:
        with ThreadPoolExecutor(workers) as pool:
            rows = list(pool.map(row, chosen))
    else:
        rows = [row(node) for node in chosen]
    return np.array(rows, dtype=np.float64).reshape(len(chosen), sizes[0]) / FLOW_UNITS


def _threads() -> int:
    """OMP_NUM_THREADS when set (as torch reads it), else this machine's cores."""
    value = os.environ.get("OMP_NUM_THREADS", "")
    return int(value) if value.isdigit() and int(value) > 0 else (os.cpu_count() or 1)


def norm_map(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """|| sum_h alpha^h_tj f^h_j ||: weights (H, T, S), values f (H, S, D) -> (T, S)."""
    return np.linalg.norm(np.einsum("hts,hsd->tsd", weights, values), axis=-1)


def gradient_weighted(weights: np.ndarray, grads: np.ndarray) -> np.ndarray:
    """Chefer et al.'s A_bar = mean_h (grad * A)^+: (H, N, M) -> (N, M)."""
    return np.clip(weights * grads, 0, None).mean(0)


def _normalized_self(relevance: np.ndarray) -> np.ndarray:
    """Chefer et al. eq. 8-9: R - I with rows normalized to sum 1, plus I."""
    eye = np.eye(relevance.shape[0])
    return normalize_rows(relevance - eye) + eye


def self_relevance(layers: Sequence[np.ndarray], n: int) -> np.ndarray:
    """Chefer et al.'s self-attention rule over a stack: R = I, then R += A_bar R per layer -> (N, N)."""
    out = np.eye(n)
    for a in layers:
        out = out + a @ out
    return out


def relevance(
    encoder: Sequence[np.ndarray], decoder: Sequence[np.ndarray], cross: Sequence[np.ndarray]
) -> np.ndarray:
    """Chefer et al. (2021) relevance of the sources for each target position: the A_bar matrices
    per layer, encoder (S, S), decoder self (T, T), cross (T, S), bottom first -> R^ts (T, S).

    R^ss = I + sum of A_bar R^ss updates; decoder self: R^tt += A_bar R^tt, R^ts += A_bar R^ts;
    cross: R^ts += norm(R^tt)^T A_bar norm(R^ss)."""
    s = cross[0].shape[1]
    t = cross[0].shape[0]
    r_ss = self_relevance(encoder, s)
    r_tt, r_ts = np.eye(t), np.zeros((t, s))
    bar_ss = _normalized_self(r_ss)
    for self_a, cross_a in zip(decoder, cross):
        r_tt = r_tt + self_a @ r_tt
        r_ts = r_ts + self_a @ r_ts
        r_ts = r_ts + _normalized_self(r_tt).T @ cross_a @ bar_ss
    return r_ts


def cosine_distance(reference: np.ndarray, variants: np.ndarray) -> np.ndarray:
    """1 - cos between each row of reference (T, D) and variants (T, S, D) -> (T, S)."""
    dot = np.einsum("td,tsd->ts", reference, variants)
    norms = np.linalg.norm(reference, axis=-1)[:, None] * np.linalg.norm(variants, axis=-1)
    return 1.0 - dot / np.maximum(norms, 1e-12)
