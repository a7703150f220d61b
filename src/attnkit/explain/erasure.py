"""Removing words or sentences from documents given as word-id arrays, as a HAN reads them.

A document is (N, W) ids, 0 = padding, sentences left-aligned with their words left-aligned. Erasing
removes the chosen units and closes the gaps (a sentence left empty disappears), so the model
reads exactly the shorter document, not one with holes. Positions: (n, w) for words, (n,) for
sentences.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np

from ..data.documents import pad_documents

Units = Literal["word", "sentence"]
UNITS: tuple[Units, ...] = ("word", "sentence")


def unit_positions(doc: np.ndarray, units: Units) -> list[tuple[int, ...]]:
    """The real units of one document (N, W), in reading order."""
    if units == "word":
        return [(int(n), int(w)) for n, w in zip(*np.nonzero(doc))]
    return [(int(n),) for n in np.nonzero((doc != 0).any(-1))[0]]


def erase(
    doc: np.ndarray, positions: Sequence[tuple[int, ...]], units: Units, keep: bool = False
) -> list[list[int]]:
    """The document (N, W) without the units at ``positions`` (``keep``: with only them), as lists
    of word ids per remaining sentence."""
    chosen = set(positions)
    out = []
    for n, row in enumerate(doc):
        ids = [int(i) for i in row if i != 0]
        if units == "sentence":
            kept = ids if ((n,) in chosen) == keep else []
        else:
            kept = [i for w, i in enumerate(ids) if ((n, w) in chosen) == keep]
        if kept:
            out.append(kept)
    return out


def erase_batch(
    docs: Sequence[np.ndarray],
    positions: Sequence[Sequence[tuple[int, ...]]],
    units: Units,
    keep: bool = False,
) -> np.ndarray:
    """``erase`` for each document, padded together: -> (B, N', W')."""
    return pad_documents([erase(d, p, units, keep) for d, p in zip(docs, positions)])


def top_units(doc: np.ndarray, scores: np.ndarray, fraction: float, units: Units) -> list[tuple[int, ...]]:
    """The ceil(fraction x units) highest-scoring units of a document (ties: reading order)."""
    real = unit_positions(doc, units)
    count = math.ceil(round(fraction * len(real), 9))
    order = sorted(range(len(real)), key=lambda i: (-float(scores[real[i]]), i))
    return [real[i] for i in order[:count]]
