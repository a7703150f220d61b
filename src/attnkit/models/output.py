"""Tied output layer over the target-side vocabulary only.

With a joint source/target subword vocabulary, many pieces never occur on the target side
(here 2,356 of 8,000 English-only pieces). Scoring only the target pieces makes the largest
matmul of a small NMT model ~30% cheaper in training, and softmax and top-k cheaper in decoding,
which searches over these V_out indices and maps them back to token ids (``target_ids``).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .int8 import int8_linear

IGNORE = -100


class TiedOutput(nn.Module):
    """Shapes: hidden (..., E) -> logits (..., V_out); ids (..., ) full -> (..., ) output index."""

    target_ids: Tensor
    lookup: Tensor

    def __init__(self, embedding: nn.Embedding, target_ids: list[int] | None = None, tied: bool = True):
        super().__init__()
        vocab = embedding.num_embeddings
        ids = torch.tensor(sorted(set(target_ids)) if target_ids else range(vocab), dtype=torch.long)
        self.register_buffer("target_ids", ids)
        lookup = torch.full((vocab,), IGNORE, dtype=torch.long)
        lookup[ids] = torch.arange(len(ids))
        self.register_buffer("lookup", lookup, persistent=False)
        self.embedding = embedding if tied else None
        self.weight = None if tied else nn.Parameter(torch.randn(len(ids), embedding.embedding_dim) * 0.05)
        self.vocab = vocab
        self._cache: Tensor = torch.empty(0)
        self._cache_key: tuple[int, int] = (0, -1)
        self._int8: nn.Module | None = None  # set by freeze_int8 (inference only)

    def selected_weight(self) -> Tensor:
        """The (V_out, E) rows that are scored, selected afresh (differentiable and traceable)."""
        if self.embedding is None:
            assert self.weight is not None
            return self.weight
        return self.embedding.weight.index_select(0, self.target_ids)

    def _weight(self) -> Tensor:
        if self.embedding is None or torch.is_grad_enabled():
            return self.selected_weight()
        # Decoding calls this every step: select the rows once per weight version.
        weight = self.embedding.weight
        key = (weight.data_ptr(), weight._version)
        if self._cache_key != key:
            self._cache, self._cache_key = self.selected_weight(), key
        return self._cache

    def forward(self, hidden: Tensor) -> Tensor:
        if self._int8 is not None:
            return self._int8(hidden)
        return F.linear(hidden, self._weight())

    def logits(self, hidden: Tensor) -> Tensor:
        """``forward`` without the decoding cache or the int8 copy: what a traced graph records (the
        export quantizes the graph itself). Shapes: hidden (..., E) -> (..., V_out)."""
        return F.linear(hidden, self.selected_weight())

    def freeze_int8(self) -> None:
        """Score with an int8 copy of the current (V_out, E) weight from now on (see ``quantize``)."""
        with torch.no_grad():
            self._int8 = int8_linear(self._weight())

    def targets(self, ids: Tensor) -> Tensor:
        """Full-vocabulary target ids -> output indices (IGNORE for pieces outside the set)."""
        return self.lookup[ids]
