"""Word alignments from attention, and alignment error rate (Och & Ney 2003).

``AER = 1 - (|A & S| + |A & P|) / (|A| + |S|)`` with sure links S, possible links P (S within P).
Alignments are sets of (source word, target word) pairs, 0-based; Pharaoh format writes ``i-j``.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..data.parallel import DataError
from ..data.words import aggregate_to_words, special_words
from ..errors import UsageError
from ..names import ALIGNMENT_METHODS as METHODS
from ..names import ALIGNMENT_SCORES as SCORES
from ..names import SYMMETRIZATIONS as SYMMETRIZE

FORCED_BATCH = 64  # pairs per batch of forced decoding (``forced_attention``'s default too)
SORT_WINDOW = 4 * FORCED_BATCH  # ``length_order``: 256 measured as fast as 512 or 1,024 (window 64: no gain)

Links = set[tuple[int, int]]


def align(weights: np.ndarray, method: str = "argmax", threshold: float = 0.3) -> Links:
    """Links from a word-level attention matrix ``weights`` (T_words, S_words) (target x source).

    - argmax: each target word links to the source word it attends to most.
    - intersect: links that are the argmax both of their row and of their column (high precision).
    - union: the argmax of every row and of every column (high recall).
    - threshold: every pair with weight >= ``threshold``, plus each row's argmax.
    """
    if method not in METHODS:
        raise UsageError(f"unknown alignment method {method!r}; valid: {', '.join(METHODS)}")
    if weights.size == 0:
        return set()
    rows = {(int(np.argmax(weights[t])), t) for t in range(weights.shape[0])}
    if method == "argmax":
        return rows
    cols = {(s, int(np.argmax(weights[:, s]))) for s in range(weights.shape[1])}
    if method == "intersect":
        return rows & cols
    if method == "union":
        return rows | cols
    return rows | {(int(s), int(t)) for t, s in zip(*np.nonzero(weights >= threshold))}


def drop_below(links: Links, soft: np.ndarray, floor: float) -> Links:
    """``links`` without those whose alignment probability ``soft[t, s]`` (target x source) is below
    ``floor``: their words align to nothing (null) rather than to a weak guess."""
    return {(s, t) for s, t in links if t < soft.shape[0] and s < soft.shape[1] and soft[t, s] >= floor}


Block = tuple[tuple[int, int], tuple[int, int]]  # ((first source word, last), (first target word, last))


def blocks(links: Links) -> list[Block]:
    """The smallest phrase pairs consistent with the links (Och and Ney's consistency, as phrase-based
    translation extracts them): spans of source and target words such that no link leaves the pair, one
    block per group of links (every link in exactly one block); inclusive bounds, in source order.
    Unlinked words belong to no block."""
    found: set[Block] = set()
    for s, t in links:
        (s0, s1), (t0, t1) = (s, s), (t, t)
        while True:  # grow both spans until every link touching one falls in the other
            inside = [(a, b) for a, b in links if s0 <= a <= s1 or t0 <= b <= t1]
            grown = (
                (min(a for a, _ in inside), max(a for a, _ in inside)),
                (min(b for _, b in inside), max(b for _, b in inside)),
            )
            if grown == ((s0, s1), (t0, t1)):
                break
            (s0, s1), (t0, t1) = grown
        found.add(((s0, s1), (t0, t1)))
    # a link's own block may lie inside another link's (a word in a gap): keep the outer one, so
    # the blocks partition the links
    return sorted(b for b in found if not any(o != b and _inside(b, o) for o in found))


def _inside(block: Block, outer: Block) -> bool:
    (s0, s1), (t0, t1) = block
    (a0, a1), (b0, b1) = outer
    return a0 <= s0 and s1 <= a1 and b0 <= t0 and t1 <= b1


def pharaoh(links: Iterable[tuple[int, int]]) -> str:
    return " ".join(f"{s}-{t}" for s, t in sorted(links))


@dataclass
class AERScore:
    aer: float
    precision: float
    recall: float
    n_sentences: int


def aer(predicted: Sequence[Links], sure: Sequence[Links], possible: Sequence[Links]) -> AERScore:
    """Corpus AER, precision (against P) and recall (against S). ``possible`` must include ``sure``."""
    if not len(predicted) == len(sure) == len(possible):
        raise ValueError(f"{len(predicted)} predicted, {len(sure)} sure, {len(possible)} possible alignments")
    a_and_s = sum(len(a & s) for a, s in zip(predicted, sure))
    a_and_p = sum(len(a & p) for a, p in zip(predicted, possible))
    n_a, n_s = sum(len(a) for a in predicted), sum(len(s) for s in sure)
    return AERScore(
        aer=1.0 - (a_and_s + a_and_p) / max(n_a + n_s, 1),
        precision=a_and_p / max(n_a, 1),
        recall=a_and_s / max(n_s, 1),
        n_sentences=len(predicted),
    )


def read_naacl(
    path: str | Path, n_sentences: int, lengths: Sequence[tuple[int, int]] | None = None
) -> tuple[list[Links], list[Links]]:
    """Read WPT-03 gold links ``SENT SRC TGT [S|P]`` (1-based). Returns (sure, possible) 0-based,
    with possible = sure | P. A missing type counts as sure. ``lengths``: (source words, target words)
    per pair, to refuse links outside a sentence."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"{path}: not UTF-8 text (byte {e.start})") from None
    return parse_naacl(text, n_sentences, str(path), lengths)


def parse_naacl(
    text: str, n_sentences: int, where: str = "gold", lengths: Sequence[tuple[int, int]] | None = None
) -> tuple[list[Links], list[Links]]:
    """``read_naacl`` on text already read (an upload); errors name ``where`` and the line."""
    sure: list[Links] = [set() for _ in range(n_sentences)]
    prob: list[Links] = [set() for _ in range(n_sentences)]
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) not in (3, 4) or not all(re.fullmatch("[0-9]+", f) for f in fields[:3]):
            raise DataError(f"{where}:{number}: expected 'SENT SRC TGT [S|P]', got {line[:80]!r}")
        sent, src, tgt = (int(f) for f in fields[:3])
        kind = fields[3] if len(fields) == 4 else "S"
        if not 1 <= sent <= n_sentences:
            pairs = "sentence 1 (one pair is given)" if n_sentences == 1 else f"sentences 1..{n_sentences}"
            raise DataError(f"{where}:{number}: sentence {sent} is not one of the pairs: links name {pairs}")
        if kind not in ("S", "P"):
            raise DataError(f"{where}:{number}: link type {kind[:10]!r} is not S (sure) or P (possible)")
        if lengths is not None:
            n_src, n_tgt = lengths[sent - 1]
            if not (1 <= src <= n_src and 1 <= tgt <= n_tgt):
                raise DataError(
                    f"{where}:{number}: link {src}-{tgt} is outside sentence {sent} "
                    f"({n_src} source words, {n_tgt} target words; links are 1-based)"
                )
        (sure if kind == "S" else prob)[sent - 1].add((src - 1, tgt - 1))
    if not any(sure) and not any(prob):
        raise DataError(f"{where}: no links (expected lines 'SENT SRC TGT [S|P]')")
    return sure, [s | p for s, p in zip(sure, prob)]


def word_matrices(
    translator: Any,
    sources: Sequence[str],
    targets: Sequence[str],
    layer: int | None = None,
    heads: Sequence[int] | None = None,
    shift: int = 0,
    scores: str = "attention",
) -> list[np.ndarray]:
    """Word-level (T_words, S_words) matrices per pair from a translator under forced decoding:
    its attention (any backend), a map derived from it (``scores`` rollout, flow, norm, grad,
    value_zeroing: ``translator_maps``, torch) or the gradient saliency of each target piece
    (``scores`` 'saliency', torch). Row t is the step that predicts target piece t; with ``shift`` 1,
    target piece t uses row t + 1, the step that reads it as input. Words are whitespace-separated."""
    if scores not in SCORES:
        raise UsageError(f"unknown alignment scores {scores!r}; valid: {', '.join(SCORES)}")
    if scores == "saliency" and (layer is not None or heads):
        raise UsageError("--layer and --heads do not apply to saliency scores")
    order = length_order(sources, targets)
    maps: list[Any] = [None] * len(order)
    for i, found in zip(order, _piece_maps(translator, sources, targets, order, layer, heads, scores)):
        maps[i] = found
    out = []
    for (src_p, tgt_p, att), src, tgt in zip(maps, sources, targets):
        att, tgt_p = (att[1:], tgt_p[:-1]) if shift else (att, tgt_p)
        rows = [i for i, special in enumerate(special_words(tgt_p)) if not special]  # no </s>, <s>, ...
        cols = [j for j, special in enumerate(special_words(src_p)) if not special]
        words = aggregate_to_words(att, src_p, tgt_p)[np.ix_(rows, cols)][: len(tgt.split())]
        words = words[:, : len(src.split())]
        if words.shape != (len(tgt.split()), len(src.split())):
            shorter = words.shape[0] < len(tgt.split()) or words.shape[1] < len(src.split())
            read = "the model reads" if shorter else "word count mismatch in"
            warnings.warn(
                f"{read} {words.shape[1]} of {len(src.split())} source and {words.shape[0]} of "
                f"{len(tgt.split())} target words of {src[:40]!r}: words past them get no links",
                stacklevel=2,
            )
        out.append(words)
    return out


def length_order(sources: Sequence[str], targets: Sequence[str], window: int = SORT_WINDOW) -> list[int]:
    """The pairs' indices sorted by length (target, then source characters) within each run of
    ``window`` consecutive pairs: the batches of forced decoding then hold pairs of about one length
    (less padding; 3,000 Tatoeba pairs, grad scores: 390 -> 588 pairs/s). Windows, not the whole
    input, so that a Ray shard of whole windows is batched as one process batches it."""
    order: list[int] = []
    for start in range(0, len(sources), window):
        span = range(start, min(start + window, len(sources)))
        order += sorted(span, key=lambda i: (len(targets[i]), len(sources[i])))
    return order


def _piece_maps(
    translator: Any,
    sources: Sequence[str],
    targets: Sequence[str],
    order: list[int],
    layer: int | None,
    heads: Sequence[int] | None,
    scores: str,
) -> list[tuple[list[str], list[str], np.ndarray]]:
    """Piece-level maps of the pairs taken in ``order`` (``word_matrices``' scores)."""
    src, tgt = [sources[i] for i in order], [targets[i] for i in order]
    if scores == "saliency":
        from ..explain.saliency import saliency_maps

        return saliency_maps(translator, src, tgt)
    if scores == "attention":
        return translator.forced_attention(src, tgt, layer, heads)  # type: ignore[no-any-return]
    from ..explain.translator_maps import translator_maps

    return translator_maps(translator, src, tgt, scores, layer, heads, batch_size=FORCED_BATCH)


def transpose(links: Links) -> Links:
    """Links of the reverse direction (target word, source word) -> (source word, target word)."""
    return {(t, s) for s, t in links}


_NEIGHBOURS = [(-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)]


def grow_diag(forward: Links, backward: Links, final: bool = False) -> Links:
    """Koehn et al. (2003) symmetrization: start from the intersection, add union links adjacent
    (diagonals included) to an aligned point that align a so-far unaligned source or target word,
    until none is added; ``final`` then adds union links whose source or target word is unaligned,
    forward links first. Both arguments are (source, target) links."""
    union, links = forward | backward, set(forward & backward)
    added = True
    while added:
        added = False
        for s, t in sorted(links):
            for ds, dt in _NEIGHBOURS:
                point = (s + ds, t + dt)
                if point in union and point not in links and _unaligned(point, links):
                    links.add(point)
                    added = True
    if final:
        for direction in (forward, backward):
            for point in sorted(direction):
                if point not in links and _unaligned(point, links):
                    links.add(point)
    return links


def _unaligned(point: tuple[int, int], links: Links) -> bool:
    return all(s != point[0] for s, _ in links) or all(t != point[1] for _, t in links)


def soft_matrix(forward: np.ndarray, backward: np.ndarray | None) -> np.ndarray:
    """The alignment probabilities of one pair, target words x source words: the forward model's word
    matrix, or with a reverse model the mean of both directions over the words both read (what 'mean'
    symmetrization links)."""
    if backward is None:
        return forward
    rows, cols = min(forward.shape[0], backward.shape[1]), min(forward.shape[1], backward.shape[0])
    return (forward[:rows, :cols] + backward[:cols, :rows].T) / 2


def symmetrize(
    forward: np.ndarray, backward: np.ndarray, how: str, method: str = "argmax", threshold: float = 0.3
) -> Links:
    """Links from both directions' word matrices: ``forward`` (T_words, S_words) of the source->target
    model, ``backward`` (S_words, T_words) of the target->source model on the same pair. 'mean'
    averages the two matrices (as target x source) and applies ``method``; the others combine each
    direction's ``method`` links."""
    if how not in SYMMETRIZE:
        raise UsageError(f"unknown symmetrization {how!r}; valid: {', '.join(SYMMETRIZE)}")
    if how == "mean":
        return align(soft_matrix(forward, backward), method, threshold)
    rows, cols = min(forward.shape[0], backward.shape[1]), min(forward.shape[1], backward.shape[0])
    forward, backward = forward[:rows, :cols], backward[:cols, :rows]  # words both models read
    one, other = align(forward, method, threshold), transpose(align(backward, method, threshold))
    if how == "intersection":
        return one & other
    if how == "union":
        return one | other
    return grow_diag(one, other, final=how == "grow-diag-final")
