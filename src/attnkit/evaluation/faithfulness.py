"""Is a HAN's attention faithful? Erase what each ranking calls important and watch the decision.

For every document, the predicted class c and its probability p(c | x). For a ranking r and a
fraction k of the document's units (words, or sentences), with r_k its top ceil(k x units) units:

- comprehensiveness(k) = p(c | x) - p(c | x without r_k): high when the units mattered;
- sufficiency(k) = p(c | x) - p(c | only r_k): low when the units alone carry the decision;
- AOPC: the mean of a curve over the fractions given (DeYoung et al. 2020, ERASER, sec. 4; with
  fractions 0, 5, 10, 20, 50% as there, comprehensiveness(0) = 0 and sufficiency(0) compares with
  the empty document).

Every number is a mean over documents with a 95% percentile bootstrap interval over documents.
``agreement`` is each method's mean Kendall tau with attention over a document's words (Jain and
Wallace 2019 report it low for attention).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from ..alignment.aligner import align_corpus, corpus_matrices
from ..alignment.links import Links
from ..errors import UsageError
from ..explain.attribution import METHODS, ProbabilityModel, scores
from ..explain.erasure import UNITS, Units, erase_batch, top_units, unit_positions
from ..log import progress
from ..names import ALIGNMENT_SCORES as SCORES
from ..vocab import WORD_PAD

FRACTIONS = (0.0, 0.05, 0.1, 0.2, 0.5)
GRADIENT_METHODS = ("gradient_x_input", "integrated_gradients")


def bootstrap_interval(values: np.ndarray, samples: int = 1000, seed: int = 0) -> tuple[float, float]:
    """95% percentile interval of the mean of ``values`` (D,) (or of rows' means for (D, ...))."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(values), size=(samples, len(values)))
    means = values[picks].mean(axis=1)
    return float(np.percentile(means, 2.5, axis=0)), float(np.percentile(means, 97.5, axis=0))


def kendall_tau(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau-a of two score vectors (n,) (0 for n < 2)."""
    if len(x) < 2:
        return 0.0
    dx, dy = np.sign(x[:, None] - x[None, :]), np.sign(y[:, None] - y[None, :])
    return float((dx * dy).sum() / (len(x) * (len(x) - 1)))


def check_fractions(fractions: Sequence[float]) -> list[float]:
    bad = [k for k in fractions if not 0.0 <= k <= 1.0]
    if bad or not fractions:
        raise UsageError(f"fractions k must be in 0..1 (at least one), got {list(fractions)}")
    return sorted(set(float(k) for k in fractions))


def _curves(
    prob: ProbabilityModel,
    words: np.ndarray,
    target: np.ndarray,
    base: np.ndarray,
    ranked: np.ndarray,
    units: Units,
    fractions: Sequence[float],
) -> tuple[np.ndarray, np.ndarray]:
    """Comprehensiveness and sufficiency (B, K) of one ranking ``ranked`` over a batch whose
    predicted classes ``target`` (B,) have probabilities ``base`` (B,)."""
    comp, suff = np.zeros((len(words), len(fractions))), np.zeros((len(words), len(fractions)))
    for j, k in enumerate(fractions):
        top = [top_units(words[b], ranked[b], k, units) for b in range(len(words))]
        without = _probs(prob, erase_batch(list(words), top, units))[np.arange(len(words)), target]
        only = _probs(prob, erase_batch(list(words), top, units, keep=True))[np.arange(len(words)), target]
        comp[:, j], suff[:, j] = base - without, base - only
    return comp, suff


def _probs(prob: ProbabilityModel, words: np.ndarray) -> np.ndarray:
    ids = torch.from_numpy(words)
    return prob.probabilities(ids, ids != WORD_PAD).numpy()


def _agreement(words: np.ndarray, attention: np.ndarray, other: np.ndarray) -> list[float]:
    taus = []
    for b in range(len(words)):
        real = tuple(np.array(p) for p in zip(*unit_positions(words[b], "word")))
        taus.append(kendall_tau(attention[b][real], other[b][real]))
    return taus


def measure_batch(
    prob: ProbabilityModel,
    words: np.ndarray,
    methods: Sequence[str],
    fractions: Sequence[float],
    seeds: int,
    steps: int,
) -> dict[str, Any]:
    """Per-document curves for one batch of documents (B, N, W): {units: {method: (comp, suff)}}."""
    probs = _probs(prob, words)
    target = probs.argmax(-1)
    base = probs[np.arange(len(words)), target]
    out: dict[str, Any] = {"curves": {u: {} for u in UNITS}, "agreement": {}, "ig_gap": []}
    word_scores: dict[str, np.ndarray] = {}
    for units in UNITS:
        for method in progress(methods, len(methods), f"{units} attributions", unit="method", minimum=1):
            runs = range(seeds) if method == "random" else range(1)
            pairs = []
            for seed in runs:
                if units == "sentence" and method in GRADIENT_METHODS:  # the word attributions, added up
                    ranked, gap = word_scores[method].sum(-1), 0.0
                else:
                    ranked, gap = scores(prob, words, target, method, units, seed=seed, steps=steps)
                if method == "integrated_gradients" and units == "word":
                    out["ig_gap"].append(gap)
                if units == "word" and seed == 0:
                    word_scores[method] = ranked
                pairs.append(_curves(prob, words, target, base, ranked, units, fractions))
            out["curves"][units][method] = tuple(np.mean([p[i] for p in pairs], axis=0) for i in (0, 1))
    if "attention" in word_scores:
        for method, ranked in word_scores.items():
            if method != "attention":
                out["agreement"][method] = _agreement(words, word_scores["attention"], ranked)
    return out


def _summary(values: np.ndarray, samples: int) -> dict[str, Any]:
    lo, hi = bootstrap_interval(values, samples)
    return {"mean": round(float(values.mean()), 4), "ci95": [round(lo, 4), round(hi, 4)]}


def han_faithfulness(
    prob: ProbabilityModel,
    documents: Sequence[np.ndarray],
    methods: Sequence[str] = METHODS,
    fractions: Sequence[float] = FRACTIONS,
    seeds: int = 3,
    steps: int = 32,
    batch_size: int = 32,
    samples: int = 1000,
) -> dict[str, Any]:
    """The report for documents given as word-id arrays (N, W) each (``data.documents.document_ids``).

    Returns JSON-ready {"fractions", "n_documents", "word"/"sentence": {method: {"comprehensiveness":
    {"curve": [{mean, ci95} per k], "aopc": {mean, ci95}}, "sufficiency": ...}}, "agreement": {method:
    {mean, ci95}}, "integrated_gradients_gap"}."""
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise UsageError(f"unknown attribution method {unknown[0]!r}; valid: {', '.join(METHODS)}")
    fractions = check_fractions(fractions)
    from ..explain.erasure import pad_documents

    parts = []
    for start in range(0, len(documents), batch_size):
        chunk = [[[int(i) for i in row if i] for row in d] for d in documents[start : start + batch_size]]
        parts.append(measure_batch(prob, pad_documents(chunk), methods, fractions, seeds, steps))
    report: dict[str, Any] = {"fractions": fractions, "n_documents": len(documents), "methods": list(methods)}
    for units in UNITS:
        report[units] = {}
        for method in methods:
            entry = {}
            for i, name in enumerate(("comprehensiveness", "sufficiency")):
                curve = np.concatenate([p["curves"][units][method][i] for p in parts])  # (D, K)
                entry[name] = {
                    "curve": [_summary(curve[:, j], samples) for j in range(len(fractions))],
                    "aopc": _summary(curve.mean(1), samples),
                }
            report[units][method] = entry
    report["agreement"] = (
        {
            m: _summary(np.array([t for p in parts for t in p["agreement"][m]]), samples)
            for m in parts[0]["agreement"]
        }
        if parts
        else {}
    )
    gaps = [g for p in parts for g in p["ig_gap"]]
    report["integrated_gradients_gap"] = round(float(np.mean(gaps)), 4) if gaps else None
    return report


def alignment_faithfulness(
    translator: Any,
    sources: Sequence[str],
    targets: Sequence[str],
    sure: Sequence[Links],
    possible: Sequence[Links],
    methods: Sequence[str] = ("argmax", "intersect"),
    samples: int = 1000,
    kinds: Sequence[str] = ("attention", "saliency"),
) -> dict[str, Any]:
    """Word alignments read from a torch translator's attention, from maps derived from it (``kinds``:
    rollout, flow, norm, grad, value_zeroing) and from the gradient saliency of each target token
    w.r.t. the source embeddings (``saliency``), each scored against gold links.

    Returns {"n_sentences", "scores": {kind: {method: {aer, precision, recall, aer_ci95}}},
    "argmax_agreement": {kind: {mean, ci95}}}: per kind other than attention, the share of a sentence's
    target words whose most attended source word is also that kind's top source word."""
    unknown = [k for k in kinds if k not in SCORES]
    if unknown or not kinds:
        raise UsageError(f"unknown scores {unknown[0] if unknown else kinds!r}; valid: {', '.join(SCORES)}")
    matrices = {kind: corpus_matrices(translator, sources, targets, scores=kind) for kind in kinds}
    report: dict[str, Any] = {"n_sentences": len(sources), "methods": list(methods), "scores": {}}
    for kind, mats in matrices.items():
        report["scores"][kind] = {}
        for method in methods:
            aligned = align_corpus(
                translator, sources, targets, method=method, gold=(sure, possible), matrices=mats
            )
            entry = {k: v for k, v in aligned.summary().items() if k in ("aer", "precision", "recall")}
            entry["aer_ci95"] = [round(x, 4) for x in aligned.interval(samples)]
            report["scores"][kind][method] = entry
    attention = (matrices.get("attention") or corpus_matrices(translator, sources, targets)).forward
    report["argmax_agreement"] = {
        kind: _summary(
            np.array(
                [
                    float((a.argmax(1) == m.argmax(1)).mean()) if a.size else 1.0
                    for a, m in zip(attention, mats)
                ]
            ),
            samples,
        )
        for kind, mats in ((k, m.forward) for k, m in matrices.items())
        if kind != "attention"
    }
    return report
