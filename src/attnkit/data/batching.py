"""Batches by token count with length bucketing, so little compute is spent on padding.

A batch holds at most ``max_tokens`` padded positions on its longer side
(n_sentences x longest side, counting EOS, as JoeyNMT's token batches count them). Sentences are
shuffled, sorted by length inside large pools, cut into batches, and the batch order shuffled:
a function of (seed, epoch) alone, so a resumed run sees exactly the batches it would have seen.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from ..errors import DataError
from .arrays import pad_ids, source_arrays
from .tokenizer import BOS, EOS, PAD

SEED_STRIDE = 100_003  # (seed, epoch) -> seed * stride + epoch: distinct for every epoch below the stride
POOL_TOKENS_PER_SENTENCE = 12  # pools hold about pool_batches batches of sentences this long


@dataclass
class Batch:
    """Shapes: src (B, S), src_mask (B, S) bool; tgt_in, tgt_out (B, T), tgt_mask (B, T) bool."""

    src: Tensor
    src_mask: Tensor
    tgt_in: Tensor
    tgt_out: Tensor
    tgt_mask: Tensor

    @property
    def n_tokens(self) -> int:
        """Real (non-pad) source + target tokens, EOS included on both sides."""
        return int(self.src_mask.sum()) + int(self.tgt_mask.sum())


def pad_batch(seqs: Sequence[Sequence[int]], prefix: int | None = None, suffix: int | None = None) -> Tensor:
    """Right-pad id lists to (B, L) with PAD (``arrays.pad_ids``), as a tensor."""
    return torch.from_numpy(pad_ids(seqs, prefix, suffix))


def make_source(seqs: Sequence[Sequence[int]]) -> tuple[Tensor, Tensor]:
    """``arrays.source_arrays`` as tensors: ids with EOS appended. -> src (B, S), src_mask (B, S)."""
    src, src_mask = source_arrays(seqs)
    return torch.from_numpy(src), torch.from_numpy(src_mask)


def make_batch(src: Sequence[Sequence[int]], tgt: Sequence[Sequence[int]]) -> Batch:
    src_ids, src_mask = make_source(src)
    tgt_in, tgt_out = pad_batch(tgt, prefix=BOS), pad_batch(tgt, suffix=EOS)
    return Batch(src_ids, src_mask, tgt_in, tgt_out, tgt_out != PAD)


class TokenBatcher:
    """Length-bucketed token batches over encoded pairs, reproducible from (seed, epoch).

    With ``world_size`` > 1, rank r takes every world_size-th sentence of each global batch, so N
    processes together see the global batches a single process sees (a batch of fewer than N sentences
    is the one exception: the ranks left without a sentence repeat its first, so every rank steps).
    """

    def __init__(
        self,
        src: Sequence[Sequence[int]],
        tgt: Sequence[Sequence[int]],
        max_tokens: int = 4096,
        seed: int = 1,
        pool_batches: int = 100,
        max_len: int = 100,
    ) -> None:
        if len(src) != len(tgt):
            raise DataError(f"src has {len(src)} sentences but tgt has {len(tgt)}")
        keep = [i for i in range(len(src)) if len(src[i]) < max_len and len(tgt[i]) < max_len]
        self.src, self.tgt, self.index = src, tgt, keep
        self.max_tokens, self.seed, self.pool_batches = max_tokens, seed, pool_batches

    def _size(self, i: int) -> int:
        return max(len(self.src[i]), len(self.tgt[i])) + 1

    def plan(self, epoch: int) -> list[list[int]]:
        """The epoch's batches as lists of sentence indices."""
        rng = random.Random(self.seed * SEED_STRIDE + epoch)
        order = list(self.index)
        rng.shuffle(order)
        pool = max(1, self.pool_batches * self.max_tokens // POOL_TOKENS_PER_SENTENCE)
        batches: list[list[int]] = []
        for start in range(0, len(order), pool):
            chunk = sorted(order[start : start + pool], key=lambda i: (len(self.src[i]), len(self.tgt[i])))
            current: list[int] = []
            longest = 0
            for i in chunk:
                longest_next = max(longest, self._size(i))
                if current and longest_next * (len(current) + 1) > self.max_tokens:
                    batches.append(current)
                    current, longest_next = [], self._size(i)
                current.append(i)
                longest = longest_next
            if current:
                batches.append(current)
        rng.shuffle(batches)
        return batches

    def batches(self, epoch: int, start: int = 0, rank: int = 0, world_size: int = 1) -> Iterator[Batch]:
        """Yield the epoch's batches from index ``start`` (for resuming), this rank's shard."""
        for ids in self.plan(epoch)[start:]:
            mine = ids[rank::world_size] or ids[:1]
            yield make_batch([self.src[i] for i in mine], [self.tgt[i] for i in mine])

    def __len__(self) -> int:
        return len(self.index)
