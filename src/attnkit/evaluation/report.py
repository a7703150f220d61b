"""``attnkit evaluate``: translate a test set and report quality, attention entropy, speed, memory."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import DataError
from .metrics import corpus_scores
from .speed import peak_rss_mb, timed


def mean_entropy(attentions: Sequence[np.ndarray]) -> float:
    """Mean entropy (nats) over every target token's attention row of every sentence (0 log 0 = 0;
    all-zero rows are left out, as ``attention.attention_entropy`` does). NumPy: no torch needed."""
    per_row = [row_entropies(a) for a in attentions if a.size]
    return float(np.concatenate(per_row).mean()) if per_row else 0.0


def row_entropies(attention: np.ndarray) -> np.ndarray:
    """The entropy (nats) of each non-zero row of one attention map (any leading dims), as float64."""
    w = np.asarray(attention, dtype=np.float64).reshape(-1, attention.shape[-1])
    return -(w * np.log(np.where(w > 0, w, 1.0))).sum(-1)[w.sum(-1) > 0]


def evaluate_translator(
    translator: Any,
    sources: Sequence[str],
    references: Sequence[str],
    beam: int = 5,
    batch_size: int = 64,
    load_seconds: float = 0.0,
) -> dict[str, Any]:
    """Returns the report keys of DESIGN.md plus the settings that produced them."""
    if len(sources) != len(references):
        raise DataError(f"{len(sources)} source lines but {len(references)} reference lines")
    results, seconds = timed(lambda: translator.translate(sources, beam=beam, batch_size=batch_size))
    hyps = [r.translation for r in results]
    entropy = mean_entropy([r.attention for r in results])
    return build_report(translator, hyps, references, entropy, seconds, load_seconds, beam, batch_size)


def build_report(
    translator: Any,
    hyps: Sequence[str],
    references: Sequence[str],
    entropy: float,
    seconds: float,
    load_seconds: float,
    beam: int,
    batch_size: int,
    peak_mb: float | None = None,
) -> dict[str, Any]:
    """The report of hypotheses made in ``seconds`` (``peak_mb``: default, this process's peak)."""
    scores = corpus_scores(list(hyps), list(references))
    n = len(hyps)
    return {
        "bleu": round(scores.bleu, 2),
        "chrf": round(scores.chrf, 2),
        "signature": {"bleu": scores.bleu_signature, "chrf": scores.chrf_signature},
        "attention_entropy": round(entropy, 4),
        "sentences_per_second": round(n / seconds, 1),
        "ms_per_sentence": round(1000 * seconds / n, 2),
        "translate_seconds": round(seconds, 2),
        "model_load_seconds": round(load_seconds, 2),
        "peak_memory_mb": round(peak_rss_mb() if peak_mb is None else peak_mb, 1),
        "n_sentences": n,
        "model": translator.path,
        "decoding": {"beam": beam, "batch_size": batch_size, "length_penalty_alpha": 1.0},
        "hypotheses": list(hyps),
    }
