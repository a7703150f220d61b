"""Greedy and beam search in NumPy over a step function: the one search every backend runs.

The torch models (through ``attnkit.decoding``) and the ONNX runtime (``attnkit.runtime``) both implement
the ``Stepper`` protocol below, so a translation does not depend on which of them computed the
probabilities, and the search itself runs as a few NumPy calls per step instead of hundreds of small torch
operations. Nothing here imports torch.

Beam search: each step scores K x V_out continuations per sentence and keeps the best 2K: EOS candidates
ranked inside the top K become finished hypotheses (scored with the GNMT length penalty), the best K
others stay alive. A sentence is done once its best candidate is an EOS (as in JoeyNMT and OpenNMT-py)
and it has ``n_best`` finished hypotheses, or once it has K of them; done sentences leave the batch. At
its length limit only EOS is allowed, so every sentence finishes. Beam size 1 reproduces greedy search.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

import numpy as np

from .errors import UsageError
from .vocab import BOS, EOS

Index = TypeVar("Index", contravariant=True)


class State(Protocol[Index]):
    """Whatever a model carries between decoder steps; the search only reorders and expands it.

    ``Index`` is what row indices are: ``np.ndarray`` here, a ``torch.Tensor`` for the torch models'
    own states (``models.outputs.Seq2SeqModel``), which ``attnkit.decoding`` wraps as NumPy ones."""

    def reorder(self, index: Index) -> State[Index]:
        """Select batch rows (B',) int64 -> a state for B' rows (finished rows leave, beams move)."""
        ...

    def expand(self, beam: int) -> State[Index]:
        """Repeat each batch row ``beam`` times, adjacently: B -> B * beam."""
        ...


class Stepper(Protocol):
    """A seq2seq model seen by the search. ``target_ids`` (V_out,): the token id of each output index.
    A stepper may set ``bos_id`` (the first decoder input) and ``eos_id`` when its vocabulary's special
    ids are not attnkit's (``specials``), as a Hugging Face model's are."""

    target_ids: np.ndarray

    def encode(self, src: np.ndarray, src_mask: np.ndarray) -> State[np.ndarray]:
        """src (B, S) int64 (or any batch-first input its model reads: images (B, C, H, W) for a
        captioner), src_mask (B, S) bool: the positions attention ranges over -> the initial state."""
        ...

    def step(
        self, prev: np.ndarray, state: Any, k: int
    ) -> tuple[np.ndarray, np.ndarray, State[np.ndarray], np.ndarray]:
        """prev (B, 1) int64 token ids -> the ``k`` best continuations of each row: log-probabilities
        (B, k) float32, largest first, and their output indices (B, k) int64; the new state; attention
        (B, 1, S). (The best 2K continuations of a beam are among its rows' best 2K each, so the search
        never needs the whole (B, V_out) distribution: graphs compute the top-k themselves.)"""
        ...


@dataclass
class Hypothesis:
    """One decoded sentence. Shapes: tokens (T,) without BOS/EOS; attention (T + 1, S) incl. EOS row."""

    tokens: list[int]
    score: float
    attention: np.ndarray


def max_lengths(src_mask: np.ndarray, ratio: float, extra: int) -> np.ndarray:
    """Per-sentence output limits ``ratio * source length + extra``, so a sentence's output never
    depends on the other sentences in its batch. Shapes: src_mask (B, S) -> (B,) int64."""
    lengths = np.asarray(src_mask).sum(1).astype(np.float32)
    return (lengths * np.float32(ratio)).astype(np.int64) + extra


def length_penalty(length: int, alpha: float) -> float:
    """GNMT length penalty ((5 + |Y|) / 6) ** alpha (Wu et al. 2016, eq. 14)."""
    return float(((5.0 + length) / 6.0) ** alpha)


def specials(model: Any) -> tuple[int, int]:
    """A stepper's (BOS, EOS) ids: its own ``bos_id``/``eos_id``, else attnkit's."""
    return int(getattr(model, "bos_id", BOS)), int(getattr(model, "eos_id", EOS))


def output_vocabulary(target_ids: np.ndarray, eos_id: int = EOS) -> tuple[np.ndarray, int]:
    """The ids the log-probabilities range over (V_out,) and the index of EOS among them.

    Searching in this space (not the full joint vocabulary) makes every step's softmax and top-k
    smaller; indices map back to token ids through it."""
    ids = np.asarray(target_ids, dtype=np.int64)
    where = np.flatnonzero(ids == eos_id)
    if where.size != 1:
        raise ValueError("the model's output vocabulary has no </s>")
    return ids, int(where[0])


def top_candidates(log_probs: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """For steppers that have whole distributions: (B, V) -> values (B, k), indices (B, k), best first."""
    ids = top_k(log_probs, k)
    return np.take_along_axis(log_probs, ids, 1), ids


def force_eos(
    values: np.ndarray, ids: np.ndarray, eos: int, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Only EOS is possible on ``rows`` (bool (B,)): the sentences at their length limit. Their
    candidates become EOS with log-probability 0 and impossible (-inf) fillers."""
    if rows.any():
        values, ids = values.copy(), ids.copy()
        values[rows], values[rows, 0] = -np.inf, 0.0
        ids[rows], ids[rows, 0] = eos + 1 if eos == 0 else 0, eos
    return values, ids


def greedy(
    model: Stepper, src: np.ndarray, src_mask: np.ndarray, max_ratio: float = 1.5, max_extra: int = 10
) -> list[Hypothesis]:
    """Pick the most probable token at each step until EOS or the sentence's length limit.

    Shapes: src (B, S), src_mask (B, S) -> B hypotheses, attention (T + 1, S_i) each.
    """
    batch, src_len = src_mask.shape
    bos_id, eos_id = specials(model)
    ids, eos = output_vocabulary(model.target_ids, eos_id)
    limits = max_lengths(src_mask, max_ratio, max_extra)  # (B,)
    steps = int(limits.max()) + 1
    tokens = np.full((batch, steps), eos, dtype=np.int64)  # output-vocabulary indices
    attention = np.zeros((batch, steps, src_len), dtype=np.float32)
    score = np.zeros(batch, dtype=np.float32)
    active = np.arange(batch)  # original sentence of each row still decoding
    state = model.encode(src, src_mask)
    prev = np.full((batch, 1), bos_id, dtype=np.int64)
    first_limit = int(limits.min())
    for t in range(steps):
        values, ids_k, state, attn = model.step(prev, state, 1)  # (b, 1), (b, 1), ..., (b, 1, S)
        if t >= first_limit:  # (a scalar test first: this loop's NumPy calls cost as much as a step)
            values, ids_k = force_eos(values, ids_k, eos, limits[active] <= t)
        best = ids_k[:, 0]
        rows = slice(None) if active.size == batch else active  # every row, or those still going
        tokens[rows, t], attention[rows, t] = best, attn[:, 0]
        score[rows] += values[:, 0]
        going = best != eos
        left = int(np.count_nonzero(going))
        if left == 0:
            break
        if left < going.size:
            keep = np.flatnonzero(going)
            state, active, best = state.reorder(keep), active[keep], best[keep]
        prev = ids[best][:, None]
    lengths = (tokens == eos).argmax(1)
    real = np.asarray(src_mask).sum(1)
    return [
        Hypothesis(ids[tokens[i, :n]].tolist(), float(score[i]), attention[i, : n + 1, : real[i]].copy())
        for i, n in enumerate(lengths.tolist())
    ]


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of each row's ``k`` largest scores, largest first; equal scores in index order, as
    ONNX TopK and torch.topk order them. Shapes: (B, N) -> (B, k)."""
    part = np.sort(np.argpartition(-scores, k - 1, axis=1)[:, :k], axis=1)
    order = np.argsort(-np.take_along_axis(scores, part, 1), axis=1, kind="stable")
    return np.take_along_axis(part, order, 1)


@dataclass
class _Beams:
    """Alive beams of the b sentences still decoding, flattened to b * K rows.

    Shapes: tokens (bK, t) token ids starting with BOS; scores (bK,); attention (bK, t, S); items (b,)."""

    tokens: np.ndarray
    scores: np.ndarray
    attention: np.ndarray
    items: np.ndarray


def beam(
    model: Stepper,
    src: np.ndarray,
    src_mask: np.ndarray,
    beam_size: int = 5,
    alpha: float = 1.0,
    n_best: int = 1,
    max_ratio: float = 1.5,
    max_extra: int = 10,
) -> list[list[Hypothesis]]:
    """Shapes: src (B, S), src_mask (B, S) -> per sentence, its ``n_best`` hypotheses, best first."""
    if not 1 <= n_best <= beam_size:
        raise UsageError(f"n_best must be in 1..beam_size ({beam_size}), got {n_best}")
    batch, k = src.shape[0], beam_size
    bos_id, eos_id = specials(model)
    ids, eos = output_vocabulary(model.target_ids, eos_id)
    limits = max_lengths(src_mask, max_ratio, max_extra)  # (B,)
    src_lens = np.asarray(src_mask).sum(1)
    finished: list[list[Hypothesis]] = [[] for _ in range(batch)]
    state = model.encode(src, src_mask).expand(k)
    first = np.full((batch, k), -np.inf, dtype=np.float32)
    first[:, 0] = 0.0
    beams = _Beams(
        np.full((batch * k, 1), bos_id, dtype=np.int64),
        first.reshape(-1),
        np.zeros((batch * k, 0, src_mask.shape[1]), dtype=np.float32),
        np.arange(batch),
    )
    for t in range(int(limits.max()) + 1):
        b, width = beams.items.size, min(2 * k, ids.size)
        values, cand, state, attn = model.step(beams.tokens[:, -1:], state, width)  # (bK, W) each
        values, cand = force_eos(values, cand, eos, np.repeat(limits[beams.items] <= t, k))
        total = (beams.scores[:, None] + values).reshape(b, k * width)
        top_ids = top_k(total, 2 * k)  # (b, 2K) positions among the sentence's K x W candidates
        top_scores = np.take_along_axis(total, top_ids, 1)
        top_beam, top_token = top_ids // width, np.take_along_axis(cand.reshape(b, k * width), top_ids, 1)
        history = np.concatenate([beams.attention, attn.astype(np.float32)], 1)  # (bK, t+1, S)
        is_eos = top_token == eos
        for item, rank in np.argwhere(is_eos[:, :k] & np.isfinite(top_scores[:, :k])).tolist():
            row, sentence = item * k + int(top_beam[item, rank]), int(beams.items[item])
            normed = float(top_scores[item, rank]) / length_penalty(t + 1, alpha)
            attention = history[row, :, : int(src_lens[sentence])].copy()
            finished[sentence].append(Hypothesis(beams.tokens[row, 1:].tolist(), normed, attention))
        count = np.array([len(finished[i]) for i in beams.items.tolist()])
        done = (count >= k) | (is_eos[:, 0] & (count >= n_best))  # (b,)
        if done.all():
            break
        # Keep the best K non-EOS candidates of the sentences still going (a stable sort puts them first).
        order = np.argsort(is_eos, axis=1, kind="stable")[:, :k]  # (b, K)
        going = np.flatnonzero(~done)
        rows = (going[:, None] * k + np.take_along_axis(top_beam, order, 1)[going]).reshape(-1)  # (b'K,)
        new_tokens = ids[np.take_along_axis(top_token, order, 1)[going]].reshape(-1)
        state = state.reorder(rows)
        beams = _Beams(
            np.concatenate([beams.tokens[rows], new_tokens[:, None]], 1),
            np.take_along_axis(top_scores, order, 1)[going].reshape(-1),
            history[rows],
            beams.items[going],
        )
    return [sorted(f, key=lambda h: -h.score)[:n_best] for f in finished]


def forced_scores(
    model: Stepper, src: np.ndarray, src_mask: np.ndarray, targets: list[list[int]]
) -> np.ndarray:
    """log p(target | source) of each row under teacher forcing, </s> included: the sum of the model's
    log-probabilities of each target token (a token outside its output vocabulary counts as the step's
    least probable one). Shapes: src (B, S), src_mask (B, S), targets B token-id lists -> (B,) float64."""
    bos_id, eos_id = specials(model)
    ids, eos = output_vocabulary(model.target_ids, eos_id)
    batch, steps = len(targets), max(len(t) for t in targets) + 1
    top = max([int(ids.max())] + [max(t) for t in targets if t]) + 1
    lookup = np.full(top, -2, dtype=np.int64)  # token id -> output index; -2: outside the vocabulary
    lookup[ids] = np.arange(ids.size)
    wanted = np.full((batch, steps), -1, dtype=np.int64)  # output index of each step's token, -1 past the end
    for b, tokens in enumerate(targets):
        wanted[b, : len(tokens)] = lookup[np.asarray(tokens, dtype=np.int64)]
        wanted[b, len(tokens)] = eos
    total = np.zeros(batch, dtype=np.float64)
    state, prev = model.encode(src, src_mask), np.full((batch, 1), bos_id, dtype=np.int64)
    whole = getattr(model, "step_log_probs", None)  # a backend's (B, V_out) step, when it has one
    for t in range(steps):
        if whole is not None:
            log_probs, state = whole(prev, state)
            rows = np.flatnonzero(wanted[:, t] != -1)
            picked = log_probs[rows, np.maximum(wanted[rows, t], 0)]
            total[rows] += np.where(wanted[rows, t] >= 0, picked, log_probs[rows].min(1))
        else:
            values, cand, state, _ = model.step(prev, state, ids.size)  # the whole distribution, sorted
            for row in np.flatnonzero(wanted[:, t] != -1).tolist():
                hit = np.flatnonzero(cand[row] == wanted[row, t])
                total[row] += float(values[row, hit[0]] if hit.size else values[row, -1])
        step_ids = [tokens[t] if t < len(tokens) else eos_id for tokens in targets]
        prev = np.asarray(step_ids, dtype=np.int64)[:, None]
    return total
