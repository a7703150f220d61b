"""Attention scorers: ``(query (B, T, Dq), keys (B, S, Dk)) -> scores (B, T, S)``.

A scorer computes compatibility scores only: no masking, no softmax, no state between calls.
Scorers that project the keys expose ``precompute(keys)``; the caller computes it once per source
sentence and passes the result back at every decoder step (``keys_proj=``).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from ..names import SCORER_TABLE, Registry
from .core import check_rank, check_same

SCORERS = Registry("scorer", SCORER_TABLE)  # names -> Scorer classes (``attnkit.names``)


class Scorer(nn.Module):
    """Base class. Subclasses implement ``score``; ``forward`` validates shapes first."""

    #: True when queries and keys must have the same width (no learned projection between them).
    needs_equal_sizes = False

    def __init__(self, query_size: int, key_size: int) -> None:
        super().__init__()
        self.query_size = query_size
        self.key_size = key_size

    def precompute(self, keys: Tensor) -> Tensor | None:
        """Key-side work that does not depend on the query. Shapes: keys (B, S, Dk) -> any."""
        return None

    def forward(self, query: Tensor, keys: Tensor, keys_proj: Tensor | None = None) -> Tensor:
        """Shapes: query (B, T, Dq), keys (B, S, Dk) -> scores (B, T, S)."""
        check_rank("query", query, "(B, T, Dq)")
        check_rank("keys", keys, "(B, S, Dk)")
        check_same("query batch B", query.shape[0], "keys batch B", keys.shape[0])
        check_same("query width Dq", query.shape[-1], "scorer query_size", self.query_size)
        check_same("keys width Dk", keys.shape[-1], "scorer key_size", self.key_size)
        if keys_proj is None:
            keys_proj = self.precompute(keys)
        return self.score(query, keys, keys_proj)

    def score(self, query: Tensor, keys: Tensor, keys_proj: Tensor | None) -> Tensor:
        raise NotImplementedError


class DotScorer(Scorer):
    """Luong dot: ``score(h_t, h_s) = h_t^T h_s`` (Luong et al. 2015, sec. 3.1, eq. 8).

    Parameter-free and fastest; needs Dq == Dk. Use when query and key spaces are already shared.
    """

    needs_equal_sizes = True

    def __init__(self, query_size: int, key_size: int) -> None:
        super().__init__(query_size, key_size)
        if query_size != key_size:
            raise ValueError(f"dot scorer needs query_size == key_size, got {query_size}, {key_size}")

    def score(self, query: Tensor, keys: Tensor, keys_proj: Tensor | None) -> Tensor:
        return torch.bmm(query, keys.transpose(1, 2))  # (B, T, S)


class ScaledDotScorer(DotScorer):
    """Scaled dot product: ``q^T k / sqrt(Dk)`` (Vaswani et al. 2017, sec. 3.2.1, eq. 1).

    The scaling keeps score variance near 1 for wide keys, so softmax does not saturate.
    """

    def score(self, query: Tensor, keys: Tensor, keys_proj: Tensor | None) -> Tensor:
        return torch.bmm(query, keys.transpose(1, 2)) / math.sqrt(self.key_size)  # (B, T, S)


class GeneralScorer(Scorer):
    """Luong general (bilinear): ``score(h_t, h_s) = h_t^T W_a h_s`` (Luong et al. 2015, eq. 8).

    The tutorial's BasicAttention. One matrix multiply per source sentence (precomputed), then a
    dot product per step: as cheap as dot, but query and key spaces may differ.
    """

    def __init__(self, query_size: int, key_size: int) -> None:
        super().__init__(query_size, key_size)
        self.key_proj = nn.Linear(key_size, query_size, bias=False)

    def precompute(self, keys: Tensor) -> Tensor:
        return self.key_proj(keys)  # (B, S, Dq)

    def score(self, query: Tensor, keys: Tensor, keys_proj: Tensor | None) -> Tensor:
        assert keys_proj is not None
        return torch.bmm(query, keys_proj.transpose(1, 2))  # (B, T, S)


class AdditiveScorer(Scorer):
    """Bahdanau additive: ``score(s, h) = v^T tanh(W_q s + W_k h)`` (Bahdanau et al. 2015, A.1.2).

    A one-layer MLP over every (query, key) pair: costs (B, T, S, A) memory but makes no
    assumption about the geometry of query and key spaces. ``attention_size`` is A.
    """

    def __init__(self, query_size: int, key_size: int, attention_size: int | None = None) -> None:
        super().__init__(query_size, key_size)
        size = attention_size or query_size
        self.query_proj = nn.Linear(query_size, size, bias=False)
        self.key_proj = nn.Linear(key_size, size, bias=False)
        self.energy = nn.Linear(size, 1, bias=False)

    def precompute(self, keys: Tensor) -> Tensor:
        return self.key_proj(keys)  # (B, S, A)

    def score(self, query: Tensor, keys: Tensor, keys_proj: Tensor | None) -> Tensor:
        assert keys_proj is not None
        hidden = torch.tanh(self.query_proj(query).unsqueeze(2) + keys_proj.unsqueeze(1))  # (B, T, S, A)
        return self.energy(hidden).squeeze(-1)  # (B, T, S)


class ConcatScorer(AdditiveScorer):
    """Luong concat: ``score(h_t, h_s) = v_a^T tanh(W_a [h_t; h_s])`` (Luong et al. 2015, eq. 8).

    ``W_a [h_t; h_s]`` equals ``W_q h_t + W_k h_s`` with W_a split column-wise, so this is the
    additive scorer; the split form lets the key half be precomputed once per sentence.
    """

    reads_raw_weights = True  # concat_weight reads the projections' weights: keep them float

    @property
    def concat_weight(self) -> Tensor:
        """W_a as Luong writes it: (A, Dq + Dk)."""
        return torch.cat([self.query_proj.weight, self.key_proj.weight], dim=1)


class LocationScorer(Scorer):
    """Luong location-based: scores from the query alone, ``a_t = softmax(W_a h_t)`` (eq. 9).

    Luong's W_a maps to a fixed maximum source length; here each key position s gets a learned
    embedding p_s (up to ``max_positions``) and ``score_s = (W_a h_t)^T p_s``, so any length up to
    that bound works and the keys' content is ignored, as in the paper.
    """

    def __init__(self, query_size: int, key_size: int, max_positions: int = 512) -> None:
        super().__init__(query_size, key_size)
        self.query_proj = nn.Linear(query_size, query_size)
        self.positions = nn.Embedding(max_positions, query_size)

    def score(self, query: Tensor, keys: Tensor, keys_proj: Tensor | None) -> Tensor:
        length = keys.shape[1]
        if length > self.positions.num_embeddings:
            raise ValueError(f"location scorer supports S <= {self.positions.num_embeddings}, got S={length}")
        pos = self.positions.weight[:length]  # (S, Dq)
        return self.query_proj(query) @ pos.t()  # (B, T, S)


def build_scorer(name: str, query_size: int, key_size: int | None = None, **options: int) -> Scorer:
    """Make a registered scorer by name; unknown names raise ValueError listing the valid ones."""
    cls = SCORERS.get(name)
    return cls(query_size, key_size if key_size is not None else query_size, **options)
