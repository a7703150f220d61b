"""Noisy-channel reranking of a translator's n-best list (Yee et al. 2019; Ng et al. 2019).

Each candidate y of a source x is scored
``log p(y | x) + channel_weight * log p(x | y) + length_weight * |y|``:
log p(y | x) is the translator's own log-probability (the beam's length-normalized score times its length
penalty: exact, no second pass; a candidate cut at the length limit counts its forced </s> as 0, as the
search does), log p(x | y) the reverse ("channel") model's under teacher forcing, |y|
the candidate's target tokens with </s>. The best candidate becomes the translation (with its own
attention, ids and model score); every candidate keeps both scores (``Translation.rerank``). The shipped
pairs and their weights, chosen on the dev split, are in the shipped models' records
(``pretrained.records``, docs/experiments/defaults.md).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .errors import UsageError
from .search import length_penalty


class Candidate(NamedTuple):
    """One n-best entry: its text, total log p(y|x), attention (T, S), target pieces with </s> and target
    ids without it (empty where the result carries none)."""

    text: str
    forward: float
    attention: np.ndarray
    pieces: list[str]
    ids: list[int]


@dataclass
class NoisyChannel:
    """A channel model (target -> source translator) and the weights of the combined score."""

    channel: Any
    channel_weight: float
    length_weight: float
    alpha: float = 1.0  # the forward beam's length-penalty exponent (its scores are divided by it)

    def __post_init__(self) -> None:
        for field_name in ("channel_weight", "length_weight"):
            value = getattr(self, field_name)
            if not isinstance(value, (int, float)) or not math.isfinite(value):
                option = "--" + field_name.replace("_", "-")
                raise UsageError(f"{option}: expected a finite number, got {value}")

    def candidates(self, result: Any) -> list[Candidate]:
        """The best translation and each alternative, with its total forward log-probability."""
        n = len(result.alternatives)
        alt_ids = result.alternative_ids or [[] for _ in range(n)]
        rows = [(result.translation, result.score, result.attention, result.target_tokens, result.target_ids)]
        rows += zip(
            result.alternatives,
            result.alternative_scores,
            result.alternative_attention,
            result.alternative_tokens,
            alt_ids,
        )
        # pieces include </s>: the beam divided log p by the length penalty of t + 1 = len(pieces)
        return [
            Candidate(
                text, float(score) * length_penalty(max(len(pieces), 1), self.alpha), attention, pieces, ids
            )
            for text, score, attention, pieces, ids in rows
        ]

    def rerank(self, results: Sequence[Any], read: Any = None) -> list[Any]:
        """Each result with its candidates reordered by the combined score (one with no alternatives is
        scored too, so every answer carries both scores); scores stay the model's own. ``read``: result ->
        the source text the forward model read (a cut source is scored as read, not whole)."""
        lists = {i: self.candidates(r) for i, r in enumerate(results) if r.translation}
        texts = [c.text for cands in lists.values() for c in cands]
        read = read or (lambda r: r.source)
        sources = [read(results[i]) for i, cands in lists.items() for _ in cands]
        channel = self.channel.log_probs(texts, sources)
        out, cursor = list(results), 0
        for i, cands in lists.items():
            out[i] = self._reordered(results[i], cands, channel[cursor : cursor + len(cands)])
            cursor += len(cands)
        return out

    def _reordered(self, result: Any, cands: list[Candidate], channel: np.ndarray) -> Any:
        scores = [result.score, *result.alternative_scores]
        combined = [
            c.forward + self.channel_weight * float(back) + self.length_weight * len(c.pieces)
            for c, back in zip(cands, channel)
        ]
        order = sorted(range(len(cands)), key=lambda k: -combined[k])
        best, rest = order[0], order[1:]
        rerank = {
            "channel_weight": self.channel_weight,
            "length_weight": self.length_weight,
            "candidates": [
                {
                    "text": cands[k].text,
                    "beam_rank": k,
                    "forward": round(cands[k].forward, 4),
                    "channel": round(float(channel[k]), 4),
                    "length": len(cands[k].pieces),
                    "combined": round(combined[k], 4),
                }
                for k in order
            ],
        }
        return dataclasses.replace(
            result,
            translation=cands[best].text,
            target_tokens=cands[best].pieces,
            attention=np.asarray(cands[best].attention, dtype=np.float32),
            score=float(scores[best]),
            target_ids=list(cands[best].ids),
            alternatives=[cands[k].text for k in rest],
            alternative_scores=[float(scores[k]) for k in rest],
            alternative_tokens=[cands[k].pieces for k in rest],
            alternative_attention=[np.asarray(cands[k].attention, dtype=np.float32) for k in rest],
            alternative_ids=[list(cands[k].ids) for k in rest] if result.alternative_ids else [],
            rerank=rerank,
        )
