"""The one alignment path: ``align_corpus`` turns sentence pairs into word links and, given gold links,
scores them; ``attnkit align``, the explorer's ``/api/align`` and ``attnkit faithfulness`` all print its
``AlignmentReport``.

Links are read from word-level matrices (``alignment.word_matrices``: attention, a map derived from it,
or saliency) of one translator, or of two (a source->target and a target->source model, combined by
``symmetrize``). Everything is (source word, target word), 0-based.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import chunks
from .lexical import Prior
from .links import (
    AERScore,
    Links,
    aer,
    align,
    blocks,
    drop_below,
    pharaoh,
    soft_matrix,
    symmetrize,
    word_matrices,
)

Gold = tuple[Sequence[Links], Sequence[Links]]  # (sure, possible), possible including sure


@dataclass
class Matrices:
    """Word matrices per pair: ``forward`` (T_words, S_words) of the translator, ``backward``
    (S_words, T_words) of the reverse model on the same pairs, or None (one direction)."""

    forward: list[np.ndarray]
    backward: list[np.ndarray] | None = None


def corpus_matrices(
    translator: Any,
    sources: Sequence[str],
    targets: Sequence[str],
    reverse: Any = None,
    scores: str = "attention",
    layer: int | None = None,
    heads: Sequence[int] | None = None,
    shift: int = 0,
) -> Matrices:
    """What links are read from: both directions' matrices when ``reverse`` is a target->source
    translator (read at the same ``layer`` and ``heads``). Pairs over ``chunks.MAX_WORDS`` words are
    aligned in chunks and rejoined (``alignment.chunks``)."""
    cuts = chunks.plan(sources, targets)
    if len(cuts) == len(sources):  # no pair is long: each is its own chunk
        forward = word_matrices(translator, sources, targets, layer, heads, shift, scores)
        if reverse is None:
            return Matrices(forward)
        return Matrices(forward, word_matrices(reverse, targets, sources, layer, heads, shift, scores))
    src, tgt = chunks.texts(sources, targets, cuts)  # long pairs split, their matrices rejoined
    shapes = [(min(len(t.split()), chunks.MAX_PAIR_WORDS), min(len(s.split()), chunks.MAX_PAIR_WORDS))
              for s, t in zip(sources, targets)]  # fmt: skip
    forward = chunks.rejoin(word_matrices(translator, src, tgt, layer, heads, shift, scores), cuts, shapes)
    if reverse is None:
        return Matrices(forward)
    backward = word_matrices(reverse, tgt, src, layer, heads, shift, scores)
    return Matrices(forward, chunks.rejoin(backward, cuts, shapes, flip=True))


@dataclass
class AlignmentReport:
    """Links per pair, the gold they were scored against (if any) and the settings that made them."""

    sources: Sequence[str]
    targets: Sequence[str]
    links: list[Links]
    gold: Gold | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    # per pair, the soft matrix the links were read from (target words x source words; ``links.soft_matrix``)
    probabilities: list[np.ndarray] | None = None

    def _repr_html_(self) -> str:
        """How a notebook shows it: the explorer's view, offline (``attnkit.notebook``)."""
        from ..names import resolve

        return str(resolve("attnkit.notebook:html")(self))

    def score(self) -> AERScore | None:
        return None if self.gold is None else aer(self.links, *self.gold)

    def summary(self) -> dict[str, Any]:
        """AER, precision, recall (rounded), the sentence count and the settings; {} without gold."""
        score = self.score()
        if score is None:
            return {}
        numbers = {"aer": score.aer, "precision": score.precision, "recall": score.recall}
        return {
            **{k: round(v, 4) for k, v in numbers.items()},
            "n_sentences": score.n_sentences,
            **self.settings,
        }

    def interval(self, samples: int = 1000, seed: int = 0) -> tuple[float, float]:
        """95% percentile interval of corpus AER over sentences drawn with replacement."""
        if self.gold is None:
            raise ValueError("an AER interval needs gold links")
        return aer_interval(self.links, *self.gold, samples=samples, seed=seed)

    def pharaoh(self) -> list[str]:
        """One line of ``i-j`` links per pair."""
        return [pharaoh(found) for found in self.links]

    def blocks(self) -> list[str]:
        """One line per pair: its phrase blocks (``links.blocks``) as ``s0-s1:t0-t1``, 0-based, inclusive."""
        return [
            " ".join(f"{s0}-{s1}:{t0}-{t1}" for (s0, s1), (t0, t1) in blocks(found)) for found in self.links
        ]

    def naacl(self) -> list[str]:
        """NAACL/WPT lines ``SENT SRC TGT S``, 1-based, every link as sure."""
        return [f"{i} {s + 1} {t + 1} S" for i, found in enumerate(self.links, 1) for s, t in sorted(found)]

    def json_rows(self, probabilities: bool = False) -> list[dict[str, Any]]:
        """Per pair: words, 0-based [source, target] links and, on request, the probabilities (T x S)."""
        out = []
        for i, row in enumerate(self.rows()):
            if probabilities and self.probabilities is not None:
                row["probabilities"] = np.round(self.probabilities[i].astype(np.float64), 4).tolist()
            out.append(row)
        return out

    def rows(self) -> list[dict[str, Any]]:
        """Per pair: words, sorted links and, with gold, each link's status and the sure links missed."""
        out = []
        for i, (src, tgt, found) in enumerate(zip(self.sources, self.targets, self.links)):
            ordered = sorted(found)
            row: dict[str, Any] = {"source_words": src.split(), "target_words": tgt.split()}
            row["links"] = [list(link) for link in ordered]
            row["blocks"] = [[list(src), list(tgt)] for src, tgt in blocks(found)]
            if self.gold is not None:
                sure, possible = self.gold[0][i], self.gold[1][i]
                row["status"] = [
                    "sure" if x in sure else "possible" if x in possible else "wrong" for x in ordered
                ]
                row["missed"] = [list(x) for x in sorted(sure - found)]
            out.append(row)
        return out


def corpus_links(
    matrices: Matrices, method: str = "argmax", threshold: float = 0.3, how: str = "mean"
) -> list[Links]:
    """Links from one direction's matrices (``method``), or both combined by ``how`` (``symmetrize``)."""
    if matrices.backward is None:
        return [align(m, method, threshold) for m in matrices.forward]
    pairs = zip(matrices.forward, matrices.backward)
    return [symmetrize(f, b, how, method, threshold) for f, b in pairs]


def align_corpus(
    translator: Any,
    sources: Sequence[str],
    targets: Sequence[str],
    *,
    reverse: Any = None,
    scores: str = "attention",
    method: str = "argmax",
    threshold: float = 0.3,
    how: str = "mean",
    layer: int | None = None,
    heads: Sequence[int] | None = None,
    shift: int = 0,
    gold: Gold | None = None,
    matrices: Matrices | None = None,
    null_threshold: float = 0.0,
    lexical: Prior | None = None,
) -> AlignmentReport:
    """Word links for every pair (whitespace-separated words), scored against ``gold`` when given.

    ``matrices`` (from ``corpus_matrices`` with the same translator, scores, layer, heads and shift)
    skips recomputing them, so one forced pass can be read with several methods. ``null_threshold``:
    links whose alignment probability is below it are dropped (their words align to nothing).
    ``lexical``: word-translation tables mixed into each direction's matrices (``alignment.lexical``)."""
    if matrices is None:
        matrices = corpus_matrices(translator, sources, targets, reverse, scores, layer, heads, shift)
    if lexical is not None:
        back = None if matrices.backward is None else lexical.mixed(matrices.backward, sources, targets, True)
        matrices = Matrices(lexical.mixed(matrices.forward, sources, targets), back)
    links = corpus_links(matrices, method, threshold, how)
    two_way = matrices.backward is not None
    if matrices.backward is None:
        soft = list(matrices.forward)
    else:
        soft = [soft_matrix(f, b) for f, b in zip(matrices.forward, matrices.backward)]
    if null_threshold > 0:
        links = [drop_below(found, m, null_threshold) for found, m in zip(links, soft)]
    weight = lexical.weight if lexical is not None else 0.0
    settings = report_settings(method, scores, how if two_way else None, shift, layer, heads, weight)
    return AlignmentReport(sources, targets, links, gold, settings, soft)


def report_settings(
    method: str,
    scores: str,
    symmetrize: str | None,
    shift: int = 0,
    layer: int | None = None,
    heads: Sequence[int] | None = None,
    lexical: float = 0.0,
) -> dict[str, Any]:
    """A report's ``settings``: how its links were made (``symmetrize`` None: one direction; ``lexical``
    the lexical tables' weight, 0 without them)."""
    settings: dict[str, Any] = {"method": method, "scores": scores, "symmetrize": symmetrize}
    settings.update(shift=shift, layer=layer, heads=list(heads) if heads else None, lexical=lexical)
    return settings


def aer_interval(
    links: Sequence[Links],
    sure: Sequence[Links],
    possible: Sequence[Links],
    samples: int = 1000,
    seed: int = 0,
) -> tuple[float, float]:
    """95% percentile interval of corpus AER over sentences drawn with replacement."""
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(samples):
        pick = rng.integers(0, len(links), size=len(links))
        values.append(aer([links[i] for i in pick], [sure[i] for i in pick], [possible[i] for i in pick]).aer)
    return float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5))
