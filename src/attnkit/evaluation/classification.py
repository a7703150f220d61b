"""Accuracy, macro-F1, per-class F1 and the confusion matrix, from labels alone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def classification_report(gold: Sequence[int], predicted: Sequence[int], num_classes: int) -> dict[str, Any]:
    """confusion[i][j] counts documents of class i predicted as j. F1 of a class with no gold and no
    predicted documents is 0 (sklearn's zero_division=0)."""
    if len(gold) != len(predicted):
        raise ValueError(f"{len(gold)} gold labels but {len(predicted)} predictions")
    confusion = [[0] * num_classes for _ in range(num_classes)]
    for g, p in zip(gold, predicted):
        confusion[g][p] += 1
    f1 = []
    for c in range(num_classes):
        tp = confusion[c][c]
        fp = sum(confusion[r][c] for r in range(num_classes)) - tp
        fn = sum(confusion[c]) - tp
        f1.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    correct = sum(confusion[c][c] for c in range(num_classes))
    return {
        "accuracy": correct / max(len(gold), 1),
        "macro_f1": sum(f1) / num_classes,
        "per_class_f1": f1,
        "confusion": confusion,
        "n_documents": len(gold),
    }


def bootstrap_intervals(
    gold: Sequence[int], predicted: Sequence[int], num_classes: int, samples: int = 1000, seed: int = 0
) -> dict[str, list[float]]:
    """95% percentile bootstrap intervals of accuracy and macro-F1 over documents drawn with
    replacement: {"accuracy": [low, high], "macro_f1": [low, high]}."""
    import numpy as np

    g, p = np.asarray(gold), np.asarray(predicted)
    picks = np.random.default_rng(seed).integers(0, len(g), size=(samples, len(g)))
    gs, ps = g[picks], p[picks]  # (samples, D)
    accuracy = (gs == ps).mean(1)
    f1 = np.zeros((samples, num_classes))
    for c in range(num_classes):
        tp = ((gs == c) & (ps == c)).sum(1)
        wrong = (gs == c).sum(1) + (ps == c).sum(1) - 2 * tp
        f1[:, c] = np.where(tp > 0, 2 * tp / np.maximum(2 * tp + wrong, 1), 0.0)
    return {
        name: [round(float(np.percentile(v, 2.5)), 4), round(float(np.percentile(v, 97.5)), 4)]
        for name, v in (("accuracy", accuracy), ("macro_f1", f1.mean(1)))
    }
