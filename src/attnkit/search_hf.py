"""Beam search with the rules of Hugging Face's ``generate()``, over the same ``search.Stepper``s, so a
Hugging Face model gives through attnkit the hypotheses and scores ``generate(num_beams=K)`` gives, with
attention. (attnkit's own ``search.beam`` follows JoeyNMT and OpenNMT-py instead: a GNMT length penalty,
and a sentence ends once its best candidate ends.)

One difference: at a sentence's length limit EOS is forced (as ``forced_eos_token_id`` does for Marian
and BART), so every hypothesis ends with EOS and has its attention row. The rules, as transformers 5
implements them: each step scores K x V continuations per sentence and keeps
the best 2K. Those among the top K that end (EOS, or the length limit) are offered to the sentence's K
finished hypotheses, scored sum of log-probabilities / length ** ``length_penalty`` (length counts the
generated tokens with EOS); the best K that do not end stay alive. A sentence stops taking hypotheses
once the best alive score over the current length cannot beat its worst finished one (``early_stopping``
False), once it has K (True), or, for "never" with a positive penalty, by the score at the length limit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .search import Hypothesis, Stepper, force_eos, max_lengths, output_vocabulary, specials, top_k

NEG = -1.0e9  # generate()'s "impossible" score (not -inf: it is added and compared as a number)


@dataclass
class _Finished:
    """Per sentence, its K best finished hypotheses so far: scores (B, K), sorted best first."""

    scores: np.ndarray
    full: np.ndarray  # (B, K) bool: slot holds a hypothesis
    hyps: list[list[Hypothesis | None]]


def _offer(
    fin: _Finished, item: int, scores: np.ndarray, candidates: list[Hypothesis | None], k: int
) -> None:
    """Merge new finished candidates (their scores, NEG where not offered) into sentence ``item``'s K."""
    merged = np.concatenate([fin.scores[item], scores])
    order = np.argsort(-merged, kind="stable")[:k]
    pool = fin.hyps[item] + candidates
    full = np.concatenate([fin.full[item], scores > NEG / 2])
    fin.scores[item], fin.full[item] = merged[order], full[order]
    fin.hyps[item] = [pool[i] for i in order]


def beam(
    model: Stepper,
    src: np.ndarray,
    src_mask: np.ndarray,
    beam_size: int = 5,
    length_penalty: float = 1.0,
    n_best: int = 1,
    early_stopping: bool | str = False,
    max_ratio: float = 1.5,
    max_extra: int = 10,
) -> list[list[Hypothesis]]:
    """Shapes: src (B, S), src_mask (B, S) -> per sentence its ``n_best`` hypotheses, best first. A
    sentence may generate up to ``max_lengths(...) + 1`` tokens, EOS included."""
    batch, k = src.shape[0], beam_size
    bos_id, eos_id = specials(model)
    ids, eos = output_vocabulary(model.target_ids, eos_id)
    limits = max_lengths(src_mask, max_ratio, max_extra) + 1  # generated tokens allowed, EOS included
    src_lens = np.asarray(src_mask).sum(1)
    state = model.encode(src, src_mask).expand(k)
    running = np.full((batch, k), NEG, dtype=np.float32)
    running[:, 0] = 0.0
    tokens = np.full((batch * k, 1), bos_id, dtype=np.int64)
    history = np.zeros((batch * k, 0, src.shape[1]), dtype=np.float32)
    fin = _Finished(
        np.full((batch, k), NEG, np.float32), np.zeros((batch, k), bool), [[None] * k for _ in range(batch)]
    )
    items, improvable = np.arange(batch), np.ones(batch, bool)
    for t in range(int(limits.max())):
        b, width = items.size, min(2 * k, ids.size)
        values, cand, state, attn = model.step(tokens[:, -1:], state, width)  # (bK, W)
        last = np.repeat(t + 1 >= limits[items], k)  # the last token allowed must be EOS (attention
        values, cand = force_eos(values, cand, eos, last)  # has its row), as forced_eos_token_id makes it
        total = (running.reshape(-1)[:, None] + values).reshape(b, k * width)
        top = top_k(total, 2 * k)  # (b, 2K) positions among K x W
        top_scores = np.take_along_axis(total, top, 1)
        parent = top // width + np.arange(b)[:, None] * k  # flat row of each candidate's beam
        token = np.take_along_axis(cand.reshape(b, k * width), top, 1)
        ends = token == eos  # (b, 2K); at the limit every candidate is EOS or impossible
        history = np.concatenate([history, attn.astype(np.float32)], 1)  # (bK, t+1, S)
        for row in range(b):
            item = int(items[row])
            if not improvable[item] or (early_stopping is True and fin.full[item].all()):
                continue
            offered = np.where(
                ends[row] & (np.arange(2 * k) < k), top_scores[row] / (t + 1) ** length_penalty, NEG
            )
            new = [
                Hypothesis(
                    tokens[parent[row, j], 1:].tolist()
                    + ([] if token[row, j] == eos else [int(ids[token[row, j]])]),
                    float(offered[j]),
                    history[parent[row, j], :, : int(src_lens[item])].copy(),
                )
                if offered[j] > NEG / 2
                else None
                for j in range(2 * k)
            ]
            _offer(fin, item, offered.astype(np.float32), new, k)
        alive = np.where(ends, top_scores + NEG, top_scores)
        keep = np.argsort(-alive, axis=1, kind="stable")[:, :k]  # (b, K), the best non-ending first
        running = np.take_along_axis(alive, keep, 1)
        rows = np.take_along_axis(parent, keep, 1).reshape(-1)
        new_tokens = ids[np.take_along_axis(token, keep, 1)].reshape(-1)
        # may a sentence's finished list still change? (generate()'s early-stop heuristic, sticky)
        length = int(limits[items].max()) if early_stopping == "never" and length_penalty > 0 else t + 1
        best = running[:, 0] / float(length) ** length_penalty
        worst = np.where(fin.full[items], fin.scores[items].min(1, keepdims=True), NEG)
        improvable[items] &= (best[:, None] > worst).any(1)
        going = improvable[items] & ~((early_stopping is True) & fin.full[items].all(1))
        going &= ~(ends | (top_scores < NEG / 2)).all(1)
        if not going.any():
            break
        keep_items = np.flatnonzero(going)
        rows = (rows.reshape(b, k)[keep_items]).reshape(-1)
        state = state.reorder(rows)
        tokens = np.concatenate([tokens[rows], new_tokens.reshape(b, k)[keep_items].reshape(-1, 1)], 1)
        history, running, items = history[rows], running[keep_items], items[keep_items]
    return [[h for h in fin.hyps[i] if h is not None][:n_best] for i in range(batch)]
