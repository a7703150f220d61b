"""Padded id arrays in NumPy (no torch): what both the torch models and the ONNX runtime are fed."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from ..vocab import EOS, PAD

MAX_SOURCE_TOKENS = 200  # subwords of one source a translator reads; longer ones are cut (with a note)


def pad_ids(
    seqs: Sequence[Sequence[int]],
    prefix: int | None = None,
    suffix: int | Sequence[int] | None = None,
    pad: int = PAD,
) -> np.ndarray:
    """Right-pad id lists to (B, L) int64 with ``pad``, optionally adding a prefix token and a suffix
    (one token, or several: a Hugging Face tokenizer's ``</s> en_XX``) to each.

    Filled in one vectorised assignment (no per-row arrays): batching keeps up with a GPU."""
    lengths = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
    start = int(prefix is not None)
    ends = [] if suffix is None else [int(suffix)] if isinstance(suffix, (int, np.integer)) else list(suffix)
    width = max(int(lengths.max(initial=0)) + start + len(ends), 1)
    out = np.full((len(seqs), width), pad, dtype=np.int64)
    if prefix is not None:
        out[:, 0] = prefix
    columns = np.arange(width)[None, :] - start
    inside = (columns >= 0) & (columns < lengths[:, None])
    out[inside] = np.fromiter(itertools.chain.from_iterable(seqs), dtype=np.int64, count=int(lengths.sum()))
    for k, end in enumerate(ends):
        out[np.arange(len(seqs)), lengths + start + k] = end
    return out


def source_arrays(
    seqs: Sequence[Sequence[int]], eos: int | Sequence[int] = EOS, pad: int = PAD
) -> tuple[np.ndarray, np.ndarray]:
    """Source ids with ``eos`` appended (one id, or a tokenizer's several end ids), padded with ``pad``.
    -> src (B, S) int64, src_mask (B, S) bool."""
    lengths = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
    n_end = 1 if isinstance(eos, (int, np.integer)) else len(eos)
    src = pad_ids(seqs, suffix=eos, pad=pad)
    return src, np.arange(src.shape[1])[None, :] < (lengths + n_end)[:, None]
