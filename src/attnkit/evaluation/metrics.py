"""Corpus BLEU and chrF with sacrebleu, reported with their signatures."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sacrebleu


@dataclass
class CorpusScores:
    bleu: float
    chrf: float
    bleu_signature: str
    chrf_signature: str


def corpus_scores(hypotheses: Sequence[str], references: Sequence[str]) -> CorpusScores:
    """sacrebleu defaults: BLEU 13a tokenization, mixed case; chrF n=6, beta=2."""
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    bleu, chrf = sacrebleu.BLEU(), sacrebleu.CHRF()
    b = bleu.corpus_score(list(hypotheses), [list(references)])
    c = chrf.corpus_score(list(hypotheses), [list(references)])
    return CorpusScores(b.score, c.score, str(bleu.get_signature()), str(chrf.get_signature()))
