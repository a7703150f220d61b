"""Long sentence pairs, split and rejoined: a translator reads at most ``MAX_SOURCE_TOKENS`` pieces of a
source (and the reverse model reads the target as its source), so a pair longer than ``MAX_WORDS`` words
on either side is cut into chunk pairs, each aligned alone, and their word matrices are put back as one
block-diagonal matrix per pair (so links, symmetrization and probabilities downstream see one pair).
Choice of ``CHUNK_WORDS`` on the 37 trial pairs joined into one 700-word pair (attention, both
directions): 20 words AER 0.377, 30: 0.378, 50: 0.437, 80: 0.585; each sentence alone: 0.341.

Cuts fall at the same fraction of both sides, moved to a nearby punctuation mark when one is close (the
mark itself on the target side when it has it), so clause boundaries are kept where the sentences have
them. A link across two chunks cannot be found: with Hansards-like text a cut every ~80 words loses few.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

MAX_WORDS = 80  # a pair longer on a side is split (at ~1.5 pieces a word, 120 of the 200 pieces read)
CHUNK_WORDS = 30  # ... into parts of at most this many words (chosen on the Hansards trial set, below)
MAX_PAIR_WORDS = 2000  # words of one side aligned at most (a 1 MB line is not a sentence): past it, none
PUNCTUATION = {".", ",", ";", ":", "!", "?", ")", "»", '"'}
ENDS = {".", "!", "?"}

Cut = tuple[int, int, int, int, int]  # (pair, source start, source end, target start, target end)


def _snap(words: Sequence[str], at: int, reach: int) -> int:
    """A cut near word position ``at``: after the nearest sentence end (. ! ?) within ``reach``, else
    after the nearest other punctuation mark, else at ``at``."""
    for marks in (ENDS, PUNCTUATION):
        for offset in sorted(range(-reach, reach + 1), key=abs):
            i = at + offset
            if 0 < i < len(words) and words[i - 1] in marks:
                return i
    return at


def _counterpart(s: Sequence[str], t: Sequence[str], cut: int) -> int | None:
    """When the source is cut after its n-th mark M and the target has as many Ms, the cut after the
    target's n-th M (sentences or clauses in the same order); else None."""
    mark = s[cut - 1] if 0 < cut <= len(s) else None
    if mark not in PUNCTUATION:
        return None
    in_s = [i + 1 for i, w in enumerate(s) if w == mark]
    in_t = [i + 1 for i, w in enumerate(t) if w == mark]
    return in_t[in_s.index(cut)] if len(in_s) == len(in_t) else None


def plan(sources: Sequence[str], targets: Sequence[str], max_words: int | None = None) -> list[Cut]:
    """The chunk pairs to align: one per pair, or for a pair over ``MAX_WORDS`` on a side, parts of at
    most ``max_words`` (default ``CHUNK_WORDS``): cut between sentences when both sides have as many
    sentence ends (the sentences paired in order), then, inside a part still too long, at proportional
    places."""
    max_words = max_words or CHUNK_WORDS
    cuts: list[Cut] = []
    for i, (src, tgt) in enumerate(zip(sources, targets)):
        s, t = src.split(), tgt.split()
        if max(len(s), len(t)) <= MAX_WORDS:
            cuts.append((i, 0, len(s), 0, len(t)))
            continue
        parts: list[Cut] = []
        for a, b, c, d in _sentences(s, t, max_words):
            if max(b - a, d - c) <= max_words:
                parts.append((i, a, b, c, d))
                continue
            edges = _proportional(s[a:b], t[c:d], max_words)
            parts += [(i, a + e0, a + e1, c + f0, c + f1) for (e0, e1), (f0, f1) in edges]
        kept = [
            p for p in parts if p[1] < MAX_PAIR_WORDS and p[3] < MAX_PAIR_WORDS
        ]  # split first, then bound
        cuts += [(i, a, min(b, MAX_PAIR_WORDS), c, min(d, MAX_PAIR_WORDS)) for i, a, b, c, d in kept]
        if max(len(s), len(t)) > MAX_PAIR_WORDS:
            warnings.warn(f"{src[:40]!r}: words past {MAX_PAIR_WORDS} on a side get no links", stacklevel=2)
    return cuts


def _sentences(s: Sequence[str], t: Sequence[str], max_words: int) -> list[tuple[int, int, int, int]]:
    """Consecutive sentences grouped up to ``max_words`` a side, when both sides have as many sentence
    ends; else the whole pair as one part."""
    ends_s = [i + 1 for i, w in enumerate(s[:-1]) if w in ENDS]
    ends_t = [i + 1 for i, w in enumerate(t[:-1]) if w in ENDS]
    if not ends_s or len(ends_s) != len(ends_t):
        return [(0, len(s), 0, len(t))]
    parts, (a, c) = [], (0, 0)
    bounds = [*zip(ends_s, ends_t), (len(s), len(t))]
    for k, (b, d) in enumerate(bounds[:-1]):
        nb, nd = bounds[k + 1]
        if max(nb - a, nd - c) > max_words and (b, d) != (a, c):  # the next sentence would overflow
            parts.append((a, b, c, d))
            a, c = b, d
    parts.append((a, len(s), c, len(t)))
    return parts


def _proportional(
    s: Sequence[str], t: Sequence[str], max_words: int
) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Cuts at the same fraction of both sides, moved to a nearby punctuation mark."""
    k = math.ceil(max(len(s), len(t), 1) / max_words)
    s_edges, t_edges = [0], [0]
    for j in range(1, k):
        cut_s = _snap(s, round(j * len(s) / k), len(s) // (3 * k))
        cut_t = _counterpart(s, t, cut_s) or _snap(t, round(cut_s * len(t) / len(s)), len(t) // (3 * k))
        s_edges.append(max(cut_s, s_edges[-1]))
        t_edges.append(max(cut_t, t_edges[-1]))
    s_edges.append(len(s))
    t_edges.append(len(t))
    return [((s_edges[j], s_edges[j + 1]), (t_edges[j], t_edges[j + 1])) for j in range(k)]


def texts(sources: Sequence[str], targets: Sequence[str], cuts: Sequence[Cut]) -> tuple[list[str], list[str]]:
    """The chunk pairs' words, as text."""
    src = [" ".join(sources[i].split()[a:b]) for i, a, b, _, _ in cuts]
    tgt = [" ".join(targets[i].split()[c:d]) for i, _, _, c, d in cuts]
    return src, tgt


def rejoin(
    matrices: Sequence[np.ndarray], cuts: Sequence[Cut], shapes: Sequence[tuple[int, int]], flip: bool = False
) -> list:
    """Per pair, its chunks' word matrices as one block-diagonal matrix of ``shapes[pair]`` (target
    words, source words); ``flip``: the matrices are the reverse model's (source words, target words)."""
    out = [np.zeros(shape[::-1] if flip else shape, dtype=np.float32) for shape in shapes]
    for m, (i, a, b, c, d) in zip(matrices, cuts):
        rows, cols = (slice(a, b), slice(c, d)) if flip else (slice(c, d), slice(a, b))
        block = out[i][rows, cols]
        h, w = min(m.shape[0], block.shape[0]), min(m.shape[1], block.shape[1])
        block[:h, :w] = m[:h, :w]
    return out
