"""The torch modules that are traced into ONNX graphs: each wraps a trained model and calls its methods.

The models offer the traceable forms themselves (``TransformerSeq2Seq.step_layers`` with a tensor
position, ``HAN.forward_padded``, ``HANEnsemble.average``, ``TiedOutput.logits``); where a second
formulation of torch's RNNs is needed (packed bidirectional RNNs have no ONNX form; the int8 step needs
its cell as matrix products), it lives in ``models.padded_rnn`` with tests comparing it to torch's.
Nothing here re-derives a model's math: graphs only pass tensors in and out by name.

State tensors cross the graph boundary by name; ``RNN_STATE`` / ``TRANSFORMER_STATE`` give each name's
batch axis, which the runtime uses to reorder and expand beams.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import torch
from torch import Tensor, nn

from ..attention import KeyValue
from ..models.han import HAN, HANEnsemble
from ..models.padded_rnn import PaddedBiRNN, StepRNN
from ..models.rnn_seq2seq import RNNSeq2Seq, RNNState
from ..models.transformer import TransformerSeq2Seq, TransformerState

# name -> batch axis, in the order the step graph takes them (after ``prev``)
RNN_STATE = {"hidden": 1, "cell": 1, "feed": 0, "memory": 0, "keys": 0, "keys_proj": 0, "src_mask": 0}
RNN_UPDATED = ("hidden", "cell", "feed")
TRANSFORMER_STATE = {"self_k": 1, "self_v": 1, "cross_k": 1, "cross_v": 1, "src_mask": 0}
MAX_POSITIONS = 1024  # target positions the Transformer step graph can encode


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
        log_probs = torch.log_softmax(self.model.output.logits(vectors[:, -1]), -1)
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
    layer_attention (B, L, H, S), self_k/self_v (L, B, H, t + 1, Dh): ``TransformerSeq2Seq.step_layers``
    with its state as tensors."""

    def __init__(self, model: TransformerSeq2Seq) -> None:
        super().__init__()
        self.model = model
        model.positions.encodings(MAX_POSITIONS)  # the table the graph records holds every position

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
        m, layers = self.model, range(len(self.model.decoder))
        cross = [KeyValue(cross_k[i], cross_v[i]) for i in layers]
        past = [KeyValue(self_k[i], self_v[i]) for i in layers]
        state = TransformerState(None, src_mask.unsqueeze(1), cross, past, position)
        log_probs, layer_attention, new = m.step_layers(prev, state)
        attention = layer_attention[:, m.attention_layer].mean(1, keepdim=True)  # (B, 1, S)
        assert new.cache is not None
        keys, values = torch.stack([kv.key for kv in new.cache]), torch.stack([kv.value for kv in new.cache])
        return log_probs, attention, layer_attention, keys, values


class HANGraph(nn.Module):
    """words (B, N, W) int64, word_mask (B, N, W) bool -> probabilities (B, C), word_weights (B, N, W),
    sentence_weights (B, N): ``HAN.forward_padded`` with ``PaddedBiRNN`` encoders, an ensemble's members
    averaged by ``HANEnsemble.average``."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        members = list(getattr(model, "members", [model]))
        self.members = nn.ModuleList(members)
        self.word_rnns = nn.ModuleList(PaddedBiRNN(cast(HAN, m).word_encoder.rnn) for m in members)
        self.sentence_rnns = nn.ModuleList(PaddedBiRNN(cast(HAN, m).sentence_encoder.rnn) for m in members)

    def forward(self, words: Tensor, word_mask: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        outputs = [
            cast(HAN, m).forward_padded(words, word_mask, (_states(w), _states(s)))
            for m, w, s in zip(self.members, self.word_rnns, self.sentence_rnns)
        ]
        return HANEnsemble.average(outputs)


def _states(rnn: nn.Module) -> Callable[[Tensor, Tensor], Tensor]:
    """A ``PaddedBiRNN`` as a HAN encoder: its outputs without the final states."""
    return lambda x, lengths: rnn(x, lengths)[0]
