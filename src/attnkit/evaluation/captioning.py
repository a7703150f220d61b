"""Caption scores: exact match, per-token accuracy, BLEU-4, and attention correctness (Liu et al. 2017).

Attention correctness of one word is the share of its attention mass inside its object's box. Cell (i, j)
of an (h, w) grid over an (H, W) image covers rows i*H/h..(i+1)*H/h and columns j*W/w..(j+1)*W/w (the
JSON contract of ``attnkit caption``); a cell partly inside the box gives the covered fraction of its mass,
which is the mass of the attention map upsampled to pixels (nearest cell) inside the box.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

Box = tuple[int, int, int, int]  # top, left, bottom, right (bottom and right exclusive), in pixels


def cell_overlap(box: Box, grid: tuple[int, int], size: tuple[int, int]) -> np.ndarray:
    """The fraction of each cell (h, w) inside ``box`` on an image of ``size`` (H, W)."""
    (h, w), (height, width) = grid, size
    top, left, bottom, right = box

    def overlap(lo: float, hi: float, cells: int, extent: int) -> np.ndarray:
        edges = np.arange(cells + 1) * (extent / cells)
        inside = np.clip(np.minimum(edges[1:], hi) - np.maximum(edges[:-1], lo), 0.0, None)
        return inside / (extent / cells)

    return np.outer(overlap(top, bottom, h, height), overlap(left, right, w, width))


def attention_correctness(attention: np.ndarray, boxes: Sequence[Box], size: tuple[int, int]) -> np.ndarray:
    """attention (N, h, w), one map per word, boxes: the N words' boxes -> (N,) mass inside each box."""
    grid = (attention.shape[1], attention.shape[2])
    return np.array([float((a * cell_overlap(b, grid, size)).sum()) for a, b in zip(attention, boxes)])


def uniform_correctness(boxes: Sequence[Box], size: tuple[int, int]) -> np.ndarray:
    """What attention spread evenly over the image scores: each box's share of the image area."""
    area = size[0] * size[1]
    return np.array([(b[2] - b[0]) * (b[3] - b[1]) / area for b in boxes], dtype=np.float64)


def _bootstrap(values: np.ndarray, samples: int = 1000, seed: int = 0) -> list[float]:
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(samples, len(values)))].mean(1)
    return [round(float(np.percentile(means, 2.5)), 4), round(float(np.percentile(means, 97.5)), 4)]


def token_accuracy(hypothesis: Sequence[str], reference: Sequence[str]) -> tuple[int, int]:
    """(correct, total): words equal at the same position, over the reference's length (a missing word is
    wrong, an extra word is not counted)."""
    correct = sum(1 for a, b in zip(hypothesis, reference) if a == b)
    return correct, len(reference)


def caption_report(
    hypotheses: Sequence[str],
    references: Sequence[str],
    correctness: Sequence[np.ndarray] | None = None,
    uniform: Sequence[np.ndarray] | None = None,
) -> dict[str, object]:
    """Scores with 95% bootstrap intervals over images. ``correctness``/``uniform``: per image, each
    reference word's attention correctness and the uniform baseline's."""
    import sacrebleu

    exact = np.array([float(h == r) for h, r in zip(hypotheses, references)])
    pairs = [token_accuracy(h.split(), r.split()) for h, r in zip(hypotheses, references)]
    right, total = np.array([p[0] for p in pairs], float), np.array([p[1] for p in pairs], float)
    per_image = right / np.maximum(total, 1)
    report: dict[str, object] = {
        "images": len(references),
        "exact_match": round(float(exact.mean()), 4),
        "exact_match_ci": _bootstrap(exact),
        "token_accuracy": round(float(right.sum() / max(total.sum(), 1)), 4),
        "token_accuracy_ci": _bootstrap(per_image),
        "bleu4": round(sacrebleu.corpus_bleu(list(hypotheses), [list(references)]).score, 2),
    }
    if correctness is not None:
        words = np.concatenate([np.asarray(c, float) for c in correctness]) if correctness else np.zeros(0)
        report["attention_correctness"] = round(float(words.mean()), 4) if words.size else None
        report["attention_correctness_ci"] = _bootstrap(words) if words.size else None
    if uniform is not None and len(uniform):
        report["uniform_correctness"] = round(float(np.concatenate(list(uniform)).mean()), 4)
    return report
