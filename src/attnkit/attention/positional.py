"""Sinusoidal positional encodings (Vaswani et al. 2017, sec. 3.5) for any sequence length."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn


def sinusoidal_table(length: int, dim: int, offset: int = 0, dtype: torch.dtype = torch.float32) -> Tensor:
    """``PE(p, 2i) = sin(p / 10000^(2i/D))``, ``PE(p, 2i+1) = cos(...)``. Shapes: -> (length, D)."""
    if dim % 2:
        raise ValueError(f"sinusoidal encodings need an even width, got D={dim}")
    position = torch.arange(offset, offset + length, dtype=torch.float64).unsqueeze(1)
    inv_freq = torch.exp(torch.arange(0, dim, 2, dtype=torch.float64) * (-math.log(10000.0) / dim))
    table = torch.zeros(length, dim, dtype=torch.float64)
    table[:, 0::2] = torch.sin(position * inv_freq)
    table[:, 1::2] = torch.cos(position * inv_freq)
    return table.to(dtype)


class SinusoidalPositionalEncoding(nn.Module):
    """Adds (or returns) sinusoidal position encodings; no maximum length.

    A table is cached and grown on demand, so sequences longer than any seen before still work.

    Shapes:
        x: (B, T, D) -> x + PE[offset : offset + T]  (B, T, D)
    """

    table: Tensor

    def __init__(self, dim: int, initial_length: int = 256) -> None:
        super().__init__()
        self.dim = dim
        self.register_buffer("table", sinusoidal_table(initial_length, dim), persistent=False)

    def encodings(self, length: int, offset: int = 0) -> Tensor:
        """Shapes: -> (length, D)."""
        needed = offset + length
        if needed > self.table.shape[0]:
            size = max(needed, 2 * self.table.shape[0])
            self.table = sinusoidal_table(size, self.dim).to(self.table.device)
        return self.table[offset:needed]

    def forward(self, x: Tensor, offset: int | Tensor = 0) -> Tensor:
        """``offset``: the first position, or a (1,) int64 tensor holding it (a traced graph's input:
        the rows are looked up in the table as it is, so grow it first with ``encodings``)."""
        if x.dim() != 3 or x.shape[-1] != self.dim:
            raise ValueError(f"expected x of shape (B, T, {self.dim}), got {tuple(x.shape)}")
        if isinstance(offset, Tensor):
            steps = offset if x.shape[1] == 1 else offset + torch.arange(x.shape[1], device=offset.device)
            return x + self.table.index_select(0, steps).unsqueeze(0).to(x.dtype)
        return x + self.encodings(x.shape[1], offset).to(x.dtype)
