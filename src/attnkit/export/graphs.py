"""The torch modules that are traced into ONNX graphs: each wraps a trained model and reuses its layers.

Only what cannot be traced as written is rewritten here: packed bidirectional RNNs (``PackedSequence``
has no ONNX form) become ``PaddedBiRNN``, one ONNX GRU/LSTM node per layer whose ``sequence_lens`` make
each row's backward pass start at its own last token, so every real position sees exactly the tokens a
packed run sees (in eager torch it reverses each row inside its length). The int8 decoder step runs its
cell as ``StepRNN``. The rest (embeddings, bridge, attention, decoder layers, output layer) calls the
model's own modules.

State tensors cross the graph boundary by name; ``RNN_STATE`` / ``TRANSFORMER_STATE`` give each name's
batch axis, which the runtime uses to reorder and expand beams.
"""

from __future__ import annotations

import math
from typing import Any, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..attention import KeyValue
from ..attention.positional import sinusoidal_table
from ..models.han import HAN
from ..models.output import TiedOutput
from ..models.rnn_seq2seq import RNNSeq2Seq, RNNState
from ..models.transformer import DecoderLayer, TransformerSeq2Seq

# name -> batch axis, in the order the step graph takes them (after ``prev``)
RNN_STATE = {"hidden": 1, "cell": 1, "feed": 0, "memory": 0, "keys": 0, "keys_proj": 0, "src_mask": 0}
RNN_UPDATED = ("hidden", "cell", "feed")
TRANSFORMER_STATE = {"self_k": 1, "self_v": 1, "cross_k": 1, "cross_v": 1, "src_mask": 0}
MAX_POSITIONS = 1024  # target positions the Transformer step graph can encode


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


def _logits(output: TiedOutput, hidden: Tensor) -> Tensor:
    """The output layer without its decoding cache: hidden (..., E) -> (..., V_out)."""
    if output.embedding is None:
        assert output.weight is not None
        return F.linear(hidden, output.weight)
    return F.linear(hidden, output.embedding.weight.index_select(0, output.target_ids))


@torch.no_grad()
def rnn_fields(model: RNNSeq2Seq) -> list[str]:
    """The state tensors this RNN model carries between steps (``RNNState``'s fields that it uses)."""
    state = model.encode(torch.full((1, 2), 5, dtype=torch.long), torch.ones(1, 2, dtype=torch.bool))
    used = [f for f in RNN_STATE if getattr(state, f) is not None]
    return [f for f in used if f != "keys" or state.keys is not state.memory]


class RNNEncoderGraph(nn.Module):
    """src (B, S) int64, src_mask (B, S) bool -> the state fields (``rnn_fields`` minus src_mask)."""

    def __init__(self, model: RNNSeq2Seq) -> None:
        super().__init__()
        self.model, self.birnn = model, PaddedBiRNN(model.encoder.rnn)
        self.fields = [f for f in rnn_fields(model) if f != "src_mask"]

    def forward(self, src: Tensor, src_mask: Tensor) -> tuple[Tensor, ...]:
        memory, final = self.birnn(self.model.source_embedding(src), src_mask.sum(1))
        state = self.model.bridge_state(memory, final, src_mask)
        return tuple(getattr(state, name) for name in self.fields)


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


class RNNStepGraph(nn.Module):
    """prev (B, 1) int64 + the state fields -> log_probs (B, V_out), attention (B, 1, S), new hidden
    [, cell] [, feed]. ``cells``: run the decoder RNN as ``StepRNN`` (for the graph that is quantized to
    int8; the model's own RNN is put back after each call), else as ONNX's GRU/LSTM op (faster in fp32)."""

    def __init__(self, model: RNNSeq2Seq, cells: bool = False) -> None:
        super().__init__()
        self.model, self.fields = model, rnn_fields(model)
        self.step_rnn = StepRNN(model.decoder_rnn) if cells else None

    def forward(self, prev: Tensor, *state: Tensor) -> tuple[Tensor, ...]:
        if self.step_rnn is None:
            return self._step(prev, *state)
        own = self.model.decoder_rnn
        self.model.decoder_rnn = self.step_rnn
        try:
            return self._step(prev, *state)
        finally:
            self.model.decoder_rnn = own

    def _step(self, prev: Tensor, *state: Tensor) -> tuple[Tensor, ...]:
        given: dict[str, Any] = dict(zip(self.fields, state))
        memory = given["memory"]
        inner = RNNState(
            given["hidden"],
            given.get("cell"),
            given.get("feed"),
            memory,
            given.get("keys_proj"),
            given["src_mask"],
            given.get("keys", memory),
        )
        vectors, weights, new = self.model._decode(self.model.embedding(prev), inner)
        log_probs = torch.log_softmax(_logits(self.model.output, vectors[:, -1]), -1)
        return (log_probs, weights, *(getattr(new, f) for f in self.fields if f in RNN_UPDATED))


class TransformerEncoderGraph(nn.Module):
    """src (B, S), src_mask (B, S) -> cross_k, cross_v (L, B, H, S, Dh): every decoder layer's projected
    memory, computed once per sentence."""

    def __init__(self, model: TransformerSeq2Seq) -> None:
        super().__init__()
        self.model = model

    def forward(self, src: Tensor, src_mask: Tensor) -> tuple[Tensor, Tensor]:
        state = self.model.encode(src, src_mask)
        return torch.stack([kv.key for kv in state.cross]), torch.stack([kv.value for kv in state.cross])


class TransformerStepGraph(nn.Module):
    """prev (B, 1), position (1,) int64, self_k/self_v (L, B, H, t, Dh), cross_k/cross_v (L, B, H, S, Dh),
    src_mask (B, S) -> log_probs (B, V_out), attention (B, 1, S) (head mean of ``attention_layer``),
    layer_attention (B, L, H, S), self_k/self_v (L, B, H, t + 1, Dh)."""

    table: Tensor

    def __init__(self, model: TransformerSeq2Seq) -> None:
        super().__init__()
        self.model = model
        self.register_buffer("table", sinusoidal_table(MAX_POSITIONS, model.d_model), persistent=False)

    def forward(
        self,
        prev: Tensor,
        position: Tensor,
        self_k: Tensor,
        self_v: Tensor,
        cross_k: Tensor,
        cross_v: Tensor,
        src_mask: Tensor,
    ) -> tuple[Tensor, ...]:
        m = self.model
        x = m.embedding(prev) * math.sqrt(m.d_model) + self.table.index_select(0, position).unsqueeze(0)
        mask, keys, values, maps = src_mask.unsqueeze(1), [], [], []
        for i, layer in enumerate(m.decoder):
            x, kv, weights = cast(DecoderLayer, layer)(
                x, KeyValue(self_k[i], self_v[i]), KeyValue(cross_k[i], cross_v[i]), mask, need_weights=True
            )
            keys.append(kv.key)
            values.append(kv.value)
            maps.append(weights[:, :, 0])  # (B, H, S)
        log_probs = torch.log_softmax(_logits(m.output, m.decoder_norm(x)[:, -1]), -1)
        layer_attention = torch.stack(maps, 1)  # (B, L, H, S)
        attention = layer_attention[:, m.attention_layer].mean(1, keepdim=True)  # (B, 1, S)
        return log_probs, attention, layer_attention, torch.stack(keys), torch.stack(values)


class HANGraph(nn.Module):
    """words (B, N, W) int64, word_mask (B, N, W) bool -> probabilities (B, C), word_weights (B, N, W),
    sentence_weights (B, N); an ensemble's members are averaged as ``HANEnsemble`` does."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        members = list(getattr(model, "members", [model]))
        self.members = nn.ModuleList(members)
        self.word_rnns = nn.ModuleList(PaddedBiRNN(cast(HAN, m).word_encoder.rnn) for m in members)
        self.sentence_rnns = nn.ModuleList(PaddedBiRNN(cast(HAN, m).sentence_encoder.rnn) for m in members)

    def forward(self, words: Tensor, word_mask: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        outputs = [
            self._member(cast(HAN, m), w, s, words, word_mask)
            for m, w, s in zip(self.members, self.word_rnns, self.sentence_rnns)
        ]
        probs = torch.stack([o[0].softmax(-1) for o in outputs]).mean(0)
        return (
            probs,
            torch.stack([o[1] for o in outputs]).mean(0),
            torch.stack([o[2] for o in outputs]).mean(0),
        )

    @staticmethod
    def _member(
        m: HAN, word_rnn: nn.Module, sentence_rnn: nn.Module, words: Tensor, word_mask: Tensor
    ) -> tuple[Tensor, Tensor, Tensor]:
        batch, n_sent, n_words = words.shape
        flat, flat_mask = words.reshape(-1, n_words), word_mask.reshape(-1, n_words)
        encoded, _ = word_rnn(m.embedding(flat), flat_mask.sum(1))  # (B*N, W, 2D)
        pooled = m.word_attention(encoded, flat_mask)
        sentence_mask = flat_mask.any(1).view(batch, n_sent)  # (B, N)
        sentences = pooled.context.view(batch, n_sent, -1) * sentence_mask.unsqueeze(-1)
        states, _ = sentence_rnn(sentences, sentence_mask.sum(1).clamp_min(1))
        document = m.sentence_attention(states, sentence_mask)
        assert pooled.weights is not None and document.weights is not None
        logits = m.classifier(document.context)
        return logits, (pooled.weights * flat_mask).view(batch, n_sent, n_words), document.weights
