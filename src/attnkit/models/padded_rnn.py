"""Padded and per-step formulations of torch's RNNs, for graphs that are traced into ONNX.

A packed bidirectional RNN (what the models run) has no ONNX form: ``PaddedBiRNN`` computes the same
function over left-aligned padded rows, one ONNX GRU/LSTM node per layer whose ``sequence_lens`` make
each row's backward pass start at its own last token (in eager torch it reverses each row inside its
length). ``StepRNN`` is one decoder time step written as matrix products and gates, so int8 quantization
(which covers MatMul/Gemm, not ONNX's GRU and LSTM ops) reaches the recurrent weights. Both read the
weights of the ``nn.GRU``/``nn.LSTM`` they mirror; tests/models/test_padded_rnn.py compares them with it.
"""

from __future__ import annotations

from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def _direction(rnn: nn.RNNBase, layer: int, reverse: bool) -> nn.RNNBase:
    """One layer and direction of a (bi)directional GRU/LSTM as its own module, same weights."""
    size = rnn.input_size if layer == 0 else 2 * rnn.hidden_size
    single = cast(Any, type(rnn))(size, rnn.hidden_size, batch_first=True)
    suffix = f"_l{layer}" + ("_reverse" if reverse else "")
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(single, f"{name}_l0").copy_(getattr(rnn, name + suffix))
    return single.eval()


def _onnx_gates(weight: Tensor, lstm: bool) -> Tensor:
    """torch's gate blocks (GRU r, z, n; LSTM i, f, g, o) in ONNX's order (GRU z, r, h; LSTM i, o, f, c)."""
    blocks = weight.chunk(4 if lstm else 3, 0)
    order = (0, 3, 1, 2) if lstm else (1, 0, 2)
    return torch.cat([blocks[i] for i in order], 0)


def _padded_pair(pair: nn.ModuleList, x: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor]:
    """A layer's forward and backward RNNs over padded rows, in eager torch: each row's backward pass
    reads its tokens reversed inside its own length. -> out (B, L, 2D), final (2, B, D)."""
    forward, backward = cast(nn.RNNBase, pair[0]), cast(nn.RNNBase, pair[1])
    steps = torch.arange(x.shape[1], device=x.device).unsqueeze(0)  # (1, L)
    inside = steps < lengths.unsqueeze(1)
    flip = torch.where(inside, lengths.unsqueeze(1) - 1 - steps, steps).unsqueeze(-1)  # (B, L, 1)
    hidden = forward.hidden_size
    last = (lengths - 1).clamp_min(0).view(-1, 1, 1).expand(-1, 1, hidden)
    out_f = forward(x)[0]
    out_r = backward(x.gather(1, flip.expand(-1, -1, x.shape[-1])))[0]  # reversed rows
    out_b = out_r.gather(1, flip.expand(-1, -1, hidden))
    final = torch.stack([out_f.gather(1, last)[:, 0], out_r.gather(1, last)[:, 0]])
    return torch.cat([out_f, out_b], -1), final


class _BiRNNNode(torch.autograd.Function):
    """One layer of a bidirectional GRU/LSTM over padded rows as a single ONNX GRU/LSTM node with
    ``sequence_lens`` (its backward direction starts at each row's last real token, as a packed RNN
    does). Only for tracing: ``forward`` gives the shapes (zeros), ``symbolic`` the node; the export's
    check compares the graph with the torch model. Shapes: x (B, L, I), lengths (B,) -> out (B, L, 2D),
    final (2, B, D) (forward, backward)."""

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: Any, x: Tensor, lengths: Tensor, w: Tensor, r: Tensor, b: Tensor, lstm: bool
    ) -> tuple[Tensor, Tensor]:
        hidden = r.shape[-1]
        return x.new_zeros(x.shape[0], x.shape[1], 2 * hidden), x.new_zeros(2, x.shape[0], hidden)

    @staticmethod
    def symbolic(  # type: ignore[no-untyped-def]
        g, x, lengths, w, r, b, lstm
    ):
        hidden = r.type().sizes()[-1]  # R: (2, gates x D, D)
        xt = g.op("Transpose", x, perm_i=[1, 0, 2])  # (L, B, I)
        lens = g.op("Cast", lengths, to_i=6)  # int32, as ONNX asks
        extra = {} if lstm else {"linear_before_reset_i": 1}  # torch's GRU applies r after R h + b
        outs = g.op(
            "LSTM" if lstm else "GRU",
            xt,
            w,
            r,
            b,
            lens,
            hidden_size_i=hidden,
            direction_s="bidirectional",
            outputs=3 if lstm else 2,
            **extra,
        )
        y, y_h = outs[0], outs[1]  # (L, 2, B, D), (2, B, D)
        y = g.op("Transpose", y, perm_i=[2, 0, 1, 3])  # (B, L, 2, D)
        shape = g.op("Constant", value_t=torch.tensor([0, 0, -1], dtype=torch.int64))
        return g.op("Reshape", y, shape), y_h


class PaddedBiRNN(nn.Module):
    """A bidirectional ``nn.GRU``/``nn.LSTM`` over left-aligned padded rows, traceable into ONNX: each
    layer becomes one ONNX GRU/LSTM node with ``sequence_lens`` (``_BiRNNNode``).

    Shapes: x (B, L, E), lengths (B,) -> outputs (B, L, 2D) (zero at padding), final (2 layers, B, D)
    ordered as ``nn.GRU``'s h_n (layer-major, forward then backward).
    """

    def __init__(self, rnn: nn.RNNBase) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            nn.ModuleList([_direction(rnn, i, False), _direction(rnn, i, True)])
            for i in range(rnn.num_layers)
        )
        self.lstm = isinstance(rnn, nn.LSTM)
        with torch.no_grad():  # per layer: ONNX's W, R, B, both directions stacked
            self.onnx_weights = [self._onnx(rnn, i) for i in range(rnn.num_layers)]

    def _onnx(self, rnn: nn.RNNBase, layer: int) -> tuple[Tensor, Tensor, Tensor]:
        ws, rs, bs = [], [], []
        for suffix in (f"_l{layer}", f"_l{layer}_reverse"):
            ws.append(_onnx_gates(getattr(rnn, "weight_ih" + suffix), self.lstm))
            rs.append(_onnx_gates(getattr(rnn, "weight_hh" + suffix), self.lstm))
            bias = [getattr(rnn, name + suffix) for name in ("bias_ih", "bias_hh")]
            bs.append(torch.cat([_onnx_gates(v, self.lstm) for v in bias]))
        return torch.stack(ws), torch.stack(rs), torch.stack(bs)

    def forward(self, x: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor]:
        inside = (torch.arange(x.shape[1], device=x.device).unsqueeze(0) < lengths.unsqueeze(1)).unsqueeze(-1)
        lengths = lengths.clamp_min(1)  # an empty row: its outputs are masked, as a packed run has none
        finals = []
        for pair, (w, r, b) in zip(self.layers, self.onnx_weights):
            if torch.jit.is_tracing():
                out, final = _BiRNNNode.apply(x, lengths, w, r, b, self.lstm)
            else:
                out, final = _padded_pair(cast(nn.ModuleList, pair), x, lengths)
            finals.append(final)
            x = out * inside
        return x, torch.cat(finals)


class StepRNN(nn.Module):
    """One time step of a unidirectional ``nn.GRU``/``nn.LSTM`` (its weights) written as matrix products
    and gates, so that int8 quantization, which covers MatMul/Gemm but not ONNX's GRU and LSTM ops,
    reaches the recurrent weights too. The gate equations are torch's (``nn.GRU``/``nn.LSTM`` docs).

    Shapes: x (B, 1, I), state (L, B, D) or ((L, B, D), (L, B, D)) -> output (B, 1, D), new state."""

    def __init__(self, rnn: nn.RNNBase) -> None:
        super().__init__()
        self.rnn, self.lstm = rnn, isinstance(rnn, nn.LSTM)

    def forward(self, x: Tensor, state: Any) -> tuple[Tensor, Any]:
        hidden, cell = state if self.lstm else (state, None)
        size, inp, hs, cs = self.rnn.hidden_size, x[:, 0], [], []
        for layer in range(self.rnn.num_layers):
            w = [
                getattr(self.rnn, f"{name}_l{layer}")
                for name in ("weight_ih", "bias_ih", "weight_hh", "bias_hh")
            ]
            h = hidden[layer]
            gates_x, gates_h = F.linear(inp, w[0], w[1]), F.linear(h, w[2], w[3])
            # static slices (Python ints) and fused gates: fewer, simpler nodes for onnxruntime
            if cell is not None:
                gates = gates_x + gates_h  # i, f, g, o
                i_f = torch.sigmoid(gates[:, : 2 * size])
                c = i_f[:, size:] * cell[layer] + i_f[:, :size] * torch.tanh(gates[:, 2 * size : 3 * size])
                inp = torch.sigmoid(gates[:, 3 * size :]) * torch.tanh(c)
                cs.append(c)
            else:  # r, z, n; h' = (1 - z) n + z h = n + z (h - n)
                r_z = torch.sigmoid(gates_x[:, : 2 * size] + gates_h[:, : 2 * size])
                n = torch.tanh(gates_x[:, 2 * size :] + r_z[:, :size] * gates_h[:, 2 * size :])
                inp = n + r_z[:, size:] * (h - n)
            hs.append(inp)
        new = torch.stack(hs)
        return inp.unsqueeze(1), ((new, torch.stack(cs)) if cell is not None else new)
