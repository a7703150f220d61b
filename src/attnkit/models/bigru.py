"""A bidirectional one-layer GRU over variable-length rows, faster to train on CPU than packed ``nn.GRU``.

``nn.GRU`` on a ``PackedSequence`` projects the input one time step at a time and copies hidden
states between steps; its backward pass is most of a HAN's training time. Here the input projection
of both directions is one matrix product over the real tokens only, both directions advance together
in one batched product per step over the rows still running (longest first, as in packing), and the
states are gathered back into token order once (3x the training throughput in a HAN:
``benchmarks/han_speed.py``). Same weights (an ``nn.GRU`` holds them, so
checkpoints are unchanged), same function: outputs and gradients match ``nn.GRU`` to float rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

# Inference on fewer rows than this (one short review) runs nn.GRU on a PackedSequence: measured
# 2.9 vs 4.1 ms for a 3-sentence review on 1 thread; from batches of 64 reviews on, the step loop wins.
SMALL_INFERENCE = 16


@dataclass
class _Plan:
    """Index maps between row-major tokens (T,) and the time-major packed layout of each direction."""

    src_fwd: Tensor  # (P,) token feeding each packed position, forward direction (P = T)
    src_bwd: Tensor  # (P,) the same for the backward direction (each row read from its end)
    batch_sizes: list[int]  # rows still running at each step, longest row first
    out_fwd: Tensor  # (T,) packed position holding each token's forward state
    out_bwd: Tensor  # (T,) the same for its backward state


@torch.no_grad()
def _plan(lengths: Tensor) -> _Plan:
    """lengths (S,) all >= 1 -> _Plan."""
    rows = lengths.numel()
    order = lengths.argsort(descending=True, stable=True)
    lens = lengths[order]
    first = lengths.cumsum(0) - lengths  # (S,) index of each row's first token
    starts = first[order]
    step = torch.arange(int(lens[0]), device=lengths.device)[:, None]  # (L, 1)
    running = step < lens[None, :]  # (L, S): at each step the running rows come first
    batch_sizes = running.sum(1)
    offsets = batch_sizes.cumsum(0) - batch_sizes  # (L,) first packed position of each step
    rank = torch.empty_like(order)
    rank[order] = torch.arange(rows, device=lengths.device)
    row = torch.repeat_interleave(torch.arange(rows, device=lengths.device), lengths)  # (T,)
    pos = torch.arange(row.numel(), device=lengths.device) - first[row]  # (T,) position within its row
    return _Plan(
        src_fwd=(starts[None, :] + step)[running],
        src_bwd=(starts[None, :] + lens[None, :] - 1 - step)[running],
        batch_sizes=batch_sizes.tolist(),
        out_fwd=offsets[pos] + rank[row],
        out_bwd=offsets[lengths[row] - 1 - pos] + rank[row],
    )


class BiGRU(nn.Module):
    """Bidirectional GRU; outputs are [forward; backward] states, zero at padding.

    D is ``hidden_size``. ``forward``: x (B, L, E) left-aligned rows, lengths (B,) all >= 1 -> (B, L, 2D).
    ``forward_tokens``: tokens (T, E) = the rows' tokens one row after another, lengths (S,) all >= 1
    summing to T -> (T, 2D) in the same order; no padded tensor is built at all.
    """

    def __init__(self, input_size: int, hidden_size: int) -> None:
        super().__init__()
        self.rnn = nn.GRU(input_size, hidden_size, batch_first=True, bidirectional=True)

    def forward(self, x: Tensor, lengths: Tensor) -> Tensor:
        mask = torch.arange(x.shape[1], device=x.device)[None, :] < lengths[:, None]  # (B, L)
        states = self.forward_tokens(x[mask], lengths)  # (T, 2D)
        return states.new_zeros(*mask.shape, states.shape[-1]).masked_scatter(mask[..., None], states)

    def forward_tokens(self, tokens: Tensor, lengths: Tensor) -> Tensor:
        if lengths.numel() == 0 or int(lengths.min()) < 1 or int(lengths.sum()) != tokens.shape[0]:
            raise ValueError(
                f"lengths (S,) must be >= 1 and sum to the T of tokens (T, E) = {tuple(tokens.shape)}, "
                f"got {lengths.tolist()[:8]}"
            )
        if not isinstance(getattr(self.rnn, "weight_ih_l0", None), Tensor):
            return self._packed(tokens, lengths)  # a quantized GRU (attnkit.models.quantize)
        if not torch.is_grad_enabled() and lengths.numel() < SMALL_INFERENCE:
            return self._packed(tokens, lengths)  # few rows, no backward: fewer ops in nn.GRU's C++ loop
        plan = _plan(lengths)
        packed = self._run(tokens, plan)  # (2, T, D)
        return torch.cat(
            [packed[0].index_select(0, plan.out_fwd), packed[1].index_select(0, plan.out_bwd)], -1
        )

    def _packed(self, tokens: Tensor, lengths: Tensor) -> Tensor:
        """The GRU module itself on a PackedSequence: tokens (T, E), lengths (S,) -> (T, 2D)."""
        mask = torch.arange(int(lengths.max()), device=tokens.device)[None, :] < lengths[:, None]  # (S, L)
        padded = tokens.new_zeros(*mask.shape, tokens.shape[-1]).masked_scatter(mask[..., None], tokens)
        packed = pack_padded_sequence(padded, lengths.cpu(), batch_first=True, enforce_sorted=False)
        return pad_packed_sequence(self.rnn(packed)[0], batch_first=True)[0][mask]

    def _run(self, tokens: Tensor, plan: _Plan) -> Tensor:
        """Both directions step by step -> (2, T, D) states in packed order."""
        p, size = dict(self.rnn.named_parameters()), self.rnn.hidden_size
        w_ih = torch.cat([p["weight_ih_l0"], p["weight_ih_l0_reverse"]])  # (6D, E)
        b_ih = torch.cat([p["bias_ih_l0"], p["bias_ih_l0_reverse"]])
        projected = torch.addmm(b_ih, tokens, w_ih.t())  # (T, 6D)
        inputs = torch.stack(
            [
                projected[:, : 3 * size].index_select(0, plan.src_fwd),
                projected[:, 3 * size :].index_select(0, plan.src_bwd),
            ]
        )  # (2, T, 3D)
        w_hh = torch.stack([p["weight_hh_l0"].t(), p["weight_hh_l0_reverse"].t()])  # (2, D, 3D)
        b_hh = torch.stack([p["bias_hh_l0"], p["bias_hh_l0_reverse"]])[:, None, :]  # (2, 1, 3D)
        h = tokens.new_zeros(2, plan.batch_sizes[0], size)
        states = []
        for x_t, running in zip(inputs.split(plan.batch_sizes, 1), plan.batch_sizes):
            h_prev = h[:, :running]
            x_r, x_z, x_n = x_t.chunk(3, -1)
            h_r, h_z, h_n = torch.baddbmm(b_hh, h_prev, w_hh).chunk(3, -1)
            reset = torch.sigmoid(x_r + h_r)
            update = torch.sigmoid(x_z + h_z)
            candidate = torch.tanh(x_n + reset * h_n)
            h = candidate + update * (h_prev - candidate)  # (1 - z) * n + z * h_prev
            states.append(h)
        return torch.cat(states, 1)
