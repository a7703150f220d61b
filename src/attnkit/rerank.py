"""Noisy-channel reranking of a translator's n-best list (Yee et al. 2019; Ng et al. 2019).

Each candidate y of a source x is scored
``log p(y | x) + channel_weight * log p(x | y) + length_weight * |y|``:
log p(y | x) is the translator's own log-probability (the beam's length-normalized score times its length
penalty: exact, no second pass; a candidate cut at the length limit counts its forced </s> as 0, as the
search does), log p(x | y) the reverse ("channel") model's under teacher forcing, |y|
the candidate's target tokens with </s>. The best candidate becomes the translation (with its own
attention and model score); every candidate keeps both scores (``Translation.rerank``). The shipped
pairs and their weights, chosen on the dev split, are in ``SHIPPED`` (docs/experiments/defaults.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from .errors import UsageError
from .search import length_penalty

# forward model -> (channel model, channel weight, length weight), chosen on dev (scripts/rerank_weights.py)
# dev BLEU: enfr-rnn 47.62 -> 48.22, enfr-transformer (int8) 50.40 -> 50.73, ende-transformer (int8)
# 42.36 -> 42.76 (docs/experiments/defaults.md)
SHIPPED: dict[str, tuple[str, float, float]] = {
    "enfr-rnn": ("fren-rnn", 0.1, 0.25),
    "enfr-transformer": ("fren-rnn", 0.2, 0.0),
    "ende-transformer": ("deen-rnn", 0.4, 0.25),
}


class Candidate(NamedTuple):
    """One n-best entry: its text, total log p(y|x), attention (T, S) and target pieces with </s>."""

    text: str
    forward: float
    attention: np.ndarray
    pieces: list[str]


@dataclass
class NoisyChannel:
    """A channel model (target -> source translator) and the weights of the combined score."""

    channel: Any
    channel_weight: float
    length_weight: float
    alpha: float = 1.0  # the forward beam's length-penalty exponent (its scores are divided by it)

    def candidates(self, result: Any) -> list[Candidate]:
        """The best translation and each alternative, with its total forward log-probability."""
        rows = [(result.translation, result.score, result.attention, result.target_tokens)]
        rows += zip(
            result.alternatives,
            result.alternative_scores,
            result.alternative_attention,
            result.alternative_tokens,
        )
        # pieces include </s>: the beam divided log p by the length penalty of t + 1 = len(pieces)
        return [
            Candidate(text, float(score) * length_penalty(max(len(pieces), 1), self.alpha), attention, pieces)
            for text, score, attention, pieces in rows
        ]

    def rerank(self, results: Sequence[Any]) -> list[Any]:
        """Each result with its candidates reordered by the combined score (one with no alternatives is
        scored too, so every answer carries both scores); scores stay the model's own."""
        lists = {i: self.candidates(r) for i, r in enumerate(results) if r.translation}
        texts = [c.text for cands in lists.values() for c in cands]
        sources = [results[i].source for i, cands in lists.items() for _ in cands]
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
            target_ids=result.target_ids if best == 0 else [],
            alternatives=[cands[k].text for k in rest],
            alternative_scores=[float(scores[k]) for k in rest],
            alternative_tokens=[cands[k].pieces for k in rest],
            alternative_attention=[np.asarray(cands[k].attention, dtype=np.float32) for k in rest],
            rerank=rerank,
        )


def shipped_channel(name: str, load: Any) -> NoisyChannel:
    """The shipped channel model and weights of the shipped translator ``name`` (``load``: a function
    name -> translator); a UsageError naming the models that have one."""
    if name not in SHIPPED:
        have = ", ".join(sorted(SHIPPED)) or "none yet"
        raise UsageError(
            f"--rerank: {name} has no shipped channel model (shipped pairs: {have}); give --channel-model"
        )
    channel, channel_weight, length_weight = SHIPPED[name]
    return NoisyChannel(load(channel), channel_weight, length_weight)
