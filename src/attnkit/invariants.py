"""What every result must satisfy, checked when it is built (torch-free; ``results`` calls these).

A translation's ``attention`` is (T, S): T = ``target_tokens`` (the target pieces followed by the end
piece, </s> for attnkit's models: row t is the step that predicted piece t) and S = ``source_tokens`` (the
pieces the model read, the end piece included). Each row is a probability distribution over the source
positions (sums to 1; zero rows only where nothing could be attended). The same holds for each n-best
alternative (T_k, S) and for any derived map that replaces the attention. The ids, when given, are the
pieces' ids without the end piece. A classification lists each sentence's words with one weight each,
sentence weights one per sentence, probabilities a distribution over the labels.

A result that breaks these raises ``InvariantError``: a bug, shown with its traceback, never a user error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import InvariantError

ROW_TOLERANCE = 2e-3  # float32 softmax rows, int8 graphs and 5-decimal JSON round-trips stay well within


def check_distribution_rows(matrix: Any, what: str, allow_zero: bool = True) -> None:
    """Each row of a 2-D ``matrix`` sums to 1 (or to 0 where ``allow_zero``), no negative or non-finite
    entry."""
    m = np.asarray(matrix, dtype=np.float64)
    if m.size == 0:
        return
    if not np.isfinite(m).all():
        raise InvariantError(f"{what}: non-finite weights")
    if (m < -1e-6).any():
        raise InvariantError(f"{what}: negative weights (min {m.min():.3g})")
    sums = m.sum(axis=-1)
    ok = np.abs(sums - 1.0) <= ROW_TOLERANCE
    if allow_zero:
        ok |= np.abs(sums) <= ROW_TOLERANCE
    if not ok.all():
        bad = int(np.flatnonzero(~ok)[0])
        raise InvariantError(f"{what}: row {bad} sums to {sums[bad]:.4f}, not 1")


def check_matrix(matrix: Any, rows: int, cols: int, what: str) -> None:
    """``matrix`` is (rows, cols) and its rows are distributions."""
    shape = np.shape(matrix)
    if shape != (rows, cols):
        raise InvariantError(f"{what} must be ({rows}, {cols}) (target x source tokens), got {shape}")
    check_distribution_rows(matrix, what)


def check_translation(r: Any, ids_with_end: bool = False) -> None:
    """The invariants of a ``results.Translation`` (see the module docstring). ``ids_with_end``: the
    target ids include the end piece (a causal LM's continuation)."""
    t, s = len(r.target_tokens), len(r.source_tokens)
    if not r.translation and t == 0:
        if np.size(r.attention):
            raise InvariantError("an empty translation carries attention")
        return
    check_matrix(r.attention, t, s, f"attention ({r.attention_map})")
    if r.target_ids and len(r.target_ids) != t - (0 if ids_with_end else 1):
        raise InvariantError(f"{len(r.target_ids)} target ids for {t} target tokens")
    _check_alternatives(r, s)


def _check_alternatives(r: Any, s: int) -> None:
    n = len(r.alternatives)
    if len(r.alternative_scores) != n:
        raise InvariantError(f"{n} alternatives but {len(r.alternative_scores)} scores")
    for name in ("alternative_tokens", "alternative_attention", "alternative_ids"):
        got = getattr(r, name, [])
        if got and len(got) != n:
            raise InvariantError(f"{n} alternatives but {len(got)} {name}")
    for k, (tokens, attention) in enumerate(zip(r.alternative_tokens, r.alternative_attention)):
        check_matrix(attention, len(tokens), s, f"alternative {k + 1}'s attention")
    scores = [r.score, *r.alternative_scores]
    if not all(np.isfinite(scores)):
        raise InvariantError("a non-finite model score")


def check_caption(r: Any) -> None:
    """The invariants of a ``caption_base.Caption``: one (h, w) map per token over the same grid as the
    end's map, each a distribution over the grid cells; each alternative valid."""
    grid = np.shape(r.eos_attention)
    if len(grid) != 2:
        raise InvariantError(f"eos_attention must be (h, w), got {grid}")
    if np.shape(r.attention) != (len(r.tokens), *grid):
        raise InvariantError(
            f"attention must be ({len(r.tokens)}, {grid[0]}, {grid[1]}), got {np.shape(r.attention)}"
        )
    maps = np.concatenate(
        [np.reshape(r.attention, (len(r.tokens), -1)), np.reshape(r.eos_attention, (1, -1))]
    )
    check_distribution_rows(maps, "caption attention", allow_zero=False)
    if not np.isfinite(r.score):
        raise InvariantError("a non-finite caption score")


def check_classification(r: Any) -> None:
    """The invariants of a ``results.Classification``."""
    if r.label not in r.probabilities:
        raise InvariantError(f"label {r.label!r} is not one of {list(r.probabilities)}")
    probs = np.array(list(r.probabilities.values()), dtype=np.float64)
    check_distribution_rows(probs[None, :], "class probabilities", allow_zero=False)
    if len(r.sentence_weights) != len(r.sentences) or len(r.word_weights) != len(r.sentences):
        raise InvariantError(
            f"{len(r.sentences)} sentences but {len(r.sentence_weights)} sentence weights and "
            f"{len(r.word_weights)} rows of word weights"
        )
    for j, (words, weights) in enumerate(zip(r.sentences, r.word_weights)):
        if len(words) != len(weights):
            raise InvariantError(f"sentence {j + 1}: {len(words)} words but {len(weights)} word weights")
    _check_weights(r.sentence_weights, "sentence weights")
    for j, weights in enumerate(r.word_weights):
        _check_weights(weights, f"sentence {j + 1}'s word weights")


def _check_weights(weights: Sequence[float], what: str) -> None:
    """Weights over what the model read: a distribution (or all zero where nothing was read)."""
    if len(weights):
        check_distribution_rows(np.asarray(weights, dtype=np.float64)[None, :], what)


def check_inspection(r: Any) -> None:
    """A causal LM's long-context attention (``results.Inspection``): ids match tokens; ``received`` (L, T)
    rows are distributions; per-head numbers are (L, H) and finite; roles (L, H); every captured row is a
    distribution over the tokens up to its own position (causal) and names a valid layer, head and row."""
    t = len(r.tokens)
    if len(r.ids) != t or not 0 < r.prompt_tokens <= t:
        raise InvariantError(f"{len(r.ids)} ids and {r.prompt_tokens} prompt tokens for {t} tokens")
    layers = np.shape(r.received)[0] if np.ndim(r.received) == 2 else -1
    if np.shape(r.received) != (layers, t):
        raise InvariantError(f"received must be (L, {t}), got {np.shape(r.received)}")
    check_distribution_rows(r.received, "received", allow_zero=False)
    heads = np.shape(r.entropy)[1] if np.ndim(r.entropy) == 2 else -1
    for name in ("entropy", "distance", "sink", "previous", "induction"):
        value = getattr(r, name)
        if value is not None and (np.shape(value) != (layers, heads) or not np.isfinite(value).all()):
            raise InvariantError(f"{name} must be finite (L={layers}, H={heads}), got {np.shape(value)}")
    if [len(row) for row in r.roles] != [heads] * layers:
        raise InvariantError(f"roles must be (L={layers}, H={heads})")
    maps = [{"layer": 0, "head": 0, **m, "name": name} for name, m in r.maps.items()]
    for item in [*r.captured, *maps]:
        rows, weights = list(item["rows"]), np.asarray(item["weights"])
        if not (0 <= item["layer"] < layers and 0 <= item["head"] < heads and all(0 <= i < t for i in rows)):
            raise InvariantError(f"captured layer {item['layer']}, head {item['head']}: out of range")
        if weights.shape != (len(rows), t):
            raise InvariantError(f"captured weights must be ({len(rows)}, {t}), got {weights.shape}")
        check_distribution_rows(weights, f"captured layer {item['layer']} head {item['head']}", False)
        future = np.arange(t)[None, :] > np.asarray(rows)[:, None]
        if np.abs(weights[future]).max(initial=0.0) > 1e-6:
            raise InvariantError(
                f"captured layer {item['layer']} head {item['head']}: weight on later tokens"
            )
