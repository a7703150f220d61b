"""Padded id arrays in NumPy (no torch): what both the torch models and the ONNX runtime are fed."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from ..vocab import EOS, PAD


def pad_ids(
    seqs: Sequence[Sequence[int]], prefix: int | None = None, suffix: int | None = None
) -> np.ndarray:
    """Right-pad id lists to (B, L) int64 with PAD, optionally adding a prefix/suffix token to each.

    Filled in one vectorised assignment (no per-row arrays): batching keeps up with a GPU."""
    lengths = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
    start = int(prefix is not None)
    width = max(int(lengths.max(initial=0)) + start + (suffix is not None), 1)
    out = np.full((len(seqs), width), PAD, dtype=np.int64)
    if prefix is not None:
        out[:, 0] = prefix
    columns = np.arange(width)[None, :] - start
    inside = (columns >= 0) & (columns < lengths[:, None])
    out[inside] = np.fromiter(itertools.chain.from_iterable(seqs), dtype=np.int64, count=int(lengths.sum()))
    if suffix is not None:
        out[np.arange(len(seqs)), lengths + start] = suffix
    return out


def source_arrays(seqs: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Source ids with EOS appended. -> src (B, S) int64, src_mask (B, S) bool."""
    src = pad_ids(seqs, suffix=EOS)
    return src, src != PAD
