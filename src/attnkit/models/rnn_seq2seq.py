"""RNN encoder-decoder with attention (Bahdanau et al. 2015; Luong et al. 2015).

Encoder: embeddings -> bidirectional GRU/LSTM. Bridge: decoder's initial state from the encoder's
final states. Decoder, each step t:
  1. RNN input = embedding(y_{t-1}) [; attentional vector of step t-1 when input feeding]
  2. h_t = RNN(input, h_{t-1})
  3. context c_t, weights a_t = attention(query=h_t, keys=encoder outputs), any registered scorer
  4. attentional vector h~_t = tanh(W_c [h_t; c_t]);  logits = W_out h~_t (tied to embeddings)
This is the decoder JoeyNMT and OpenNMT-py use for both "Bahdanau" (additive scorer) and
"Luong" (dot/general/concat) attention. Without input feeding, steps 1-2 run over the whole
target at once and steps 3-4 are batched over T, which is much faster in training.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from ..attention import SCORERS, Attention
from ..errors import ConfigError
from ..vocab import PAD
from .output import TiedOutput
from .outputs import Seq2SeqOutput


@dataclass
class RNNState:
    """Decoder state. Shapes: hidden (L, B, D) [cell (L, B, D)], feed (B, E), memory (B, S, 2D),
    keys_proj (B, S, A) or None, src_mask (B, S), keys (B, S, K): memory itself, or its projection."""

    hidden: Tensor
    cell: Tensor | None
    feed: Tensor | None
    memory: Tensor
    keys_proj: Tensor | None
    src_mask: Tensor
    keys: Tensor

    def _map(self, on_batch: Callable[[Tensor], Tensor], on_layers: Callable[[Tensor], Tensor]) -> RNNState:
        """Apply ``on_batch`` to batch-first tensors and ``on_layers`` to (L, B, D) ones."""
        memory = on_batch(self.memory)
        return RNNState(
            on_layers(self.hidden),
            None if self.cell is None else on_layers(self.cell),
            None if self.feed is None else on_batch(self.feed),
            memory,
            None if self.keys_proj is None else on_batch(self.keys_proj),
            on_batch(self.src_mask),
            memory if self.keys is self.memory else on_batch(self.keys),
        )

    def reorder(self, index: Tensor) -> RNNState:
        return self._map(lambda t: t.index_select(0, index), lambda t: t.index_select(1, index))

    def expand(self, beam: int) -> RNNState:
        return self._map(lambda t: t.repeat_interleave(beam, 0), lambda t: t.repeat_interleave(beam, 1))


@dataclass
class RNNTrace:
    """Shapes: logits (B, T, V_out); weights: the attention (B, t, S) as computed, in the autograd
    graph (one (B, T, S) piece, or T pieces (B, 1, S) with input feeding); queries h_t (B, T, D);
    vectors h~_t (B, T, E); memory, the attention's values (B, S, 2D)."""

    logits: Tensor
    weights: list[Tensor]
    queries: Tensor
    vectors: Tensor
    memory: Tensor


class RNNEncoder(nn.Module):
    """Shapes: embedded (B, S, E), src_mask (B, S) -> outputs (B, S, 2D), final (2L, B, D)."""

    def __init__(self, embed_size: int, hidden_size: int, rnn_type: str, num_layers: int, dropout: float):
        super().__init__()
        rnn_cls = {"gru": nn.GRU, "lstm": nn.LSTM}[rnn_type]
        self.rnn = rnn_cls(
            embed_size,
            hidden_size,
            num_layers,
            batch_first=True,
            bidirectional=True,
            dropout=dropout if num_layers > 1 else 0.0,
        )
        self.dropout = nn.Dropout(dropout)

    def forward(self, embedded: Tensor, src_mask: Tensor) -> tuple[Tensor, Tensor]:
        lengths = src_mask.sum(1).cpu()
        packed = pack_padded_sequence(self.dropout(embedded), lengths, batch_first=True, enforce_sorted=False)
        out, final = self.rnn(packed)
        outputs, _ = pad_packed_sequence(out, batch_first=True, total_length=embedded.shape[1])
        final_h = final[0] if isinstance(final, tuple) else final  # (2L, B, D)
        return outputs, final_h


class RNNSeq2Seq(nn.Module):
    """Attentional RNN encoder-decoder; the scorer is injected by name from the registry.

    Shapes (forward): src (B, S), src_mask (B, S), tgt_in (B, T) -> logits (B, T, V_out), attention (B, T, S)
    (V_out: the target-side pieces, see ``TiedOutput``; ``step``'s log-probabilities range over them too).
    D is the RNN's hidden size, E the embedding size.
    """

    # One attention map per target step: no layers or heads to choose from (see TransformerSeq2Seq).
    attention_layers = 0
    attention_heads = 1

    def __init__(
        self,
        vocab_size: int,
        embed_size: int = 256,
        hidden_size: int = 256,
        scorer: str = "additive",
        rnn_type: str = "gru",
        num_layers: int = 1,
        dropout: float = 0.2,
        input_feeding: bool = True,
        tied_embeddings: bool = True,
        target_ids: list[int] | None = None,
        src_vocab_size: int | None = None,
    ) -> None:
        super().__init__()
        if rnn_type not in ("gru", "lstm"):
            raise ConfigError(f"unknown rnn_type {rnn_type!r}; valid: gru, lstm")
        self.rnn_type, self.num_layers, self.input_feeding = rnn_type, num_layers, input_feeding
        self.embedding = nn.Embedding(vocab_size, embed_size, padding_idx=PAD)
        # A separate source vocabulary gets its own table; ``embedding`` is then the target side's.
        self.src_embedding = None if src_vocab_size is None else nn.Embedding(src_vocab_size, embed_size, PAD)
        for table in (self.embedding, self.src_embedding):
            if table is not None:
                nn.init.normal_(table.weight, std=0.1)
        self.encoder = RNNEncoder(embed_size, hidden_size, rnn_type, num_layers, dropout)
        self.bridge = nn.Linear(2 * hidden_size, hidden_size)
        rnn_cls = {"gru": nn.GRU, "lstm": nn.LSTM}[rnn_type]
        dec_in = embed_size + (embed_size if input_feeding else 0)
        self.decoder_rnn = rnn_cls(
            dec_in, hidden_size, num_layers, batch_first=True, dropout=dropout if num_layers > 1 else 0.0
        )
        # Parameter-free scorers (dot) need keys as wide as the decoder state: project them once.
        equal = SCORERS.get(scorer).needs_equal_sizes
        self.key_bridge = nn.Linear(2 * hidden_size, hidden_size, bias=False) if equal else None
        self.attention = Attention(scorer, hidden_size, hidden_size if equal else 2 * hidden_size)
        self.combine = nn.Linear(hidden_size + 2 * hidden_size, embed_size)
        self.dropout = nn.Dropout(dropout)
        self.output = TiedOutput(self.embedding, target_ids, tied_embeddings)

    def encode(self, src: Tensor, src_mask: Tensor) -> RNNState:
        return self.encode_embedded(self.source_embedding(src), src_mask)

    def encode_embedded(self, embedded: Tensor, src_mask: Tensor) -> RNNState:
        """``encode`` from source embeddings (B, S, E) (``source_embedding``): where gradient
        attributions start (``explain.saliency``)."""
        memory, final = self.encoder(embedded, src_mask)  # (B, S, 2D), (2L, B, D)
        return self.bridge_state(memory, final, src_mask)

    def source_embedding(self, src: Tensor) -> Tensor:
        """src (B, S) -> (B, S, E) from the source table (the joint one when there is no separate one)."""
        return (self.embedding if self.src_embedding is None else self.src_embedding)(src)

    def bridge_state(self, memory: Tensor, final: Tensor, src_mask: Tensor) -> RNNState:
        """The decoder's initial state from the encoder's outputs (B, S, 2D) and final states (2L, B, D)."""
        layers = final.view(self.num_layers, 2, final.shape[1], final.shape[2])  # (L, 2, B, D)
        hidden = torch.tanh(
            self.bridge(torch.cat([layers[:, 0], layers[:, 1]], -1))
        ).contiguous()  # (L, B, D)
        cell = torch.zeros_like(hidden) if self.rnn_type == "lstm" else None
        batch = memory.shape[0]
        feed = memory.new_zeros(batch, self.embedding.embedding_dim) if self.input_feeding else None
        keys = memory if self.key_bridge is None else self.key_bridge(memory)
        return RNNState(hidden, cell, feed, memory, self.attention.precompute(keys), src_mask, keys)

    def _decode(self, embedded: Tensor, state: RNNState) -> tuple[Tensor, Tensor, RNNState]:
        """Run steps 1-4 over T positions. embedded (B, T, E) -> vectors (B, T, E), weights (B, T, S)."""
        vectors, weights, new_state, _ = self._decode_parts(embedded, state)
        return vectors, weights, new_state

    def _decode_parts(self, embedded: Tensor, state: RNNState) -> tuple[Tensor, Tensor, RNNState, Tensor]:
        """``_decode`` and the decoder RNN's outputs h_t (B, T, D), the queries of the attention."""
        rnn_state = state.hidden if state.cell is None else (state.hidden, state.cell)
        if state.feed is None:
            rnn_in = self.dropout(embedded)
        else:
            rnn_in = torch.cat([self.dropout(embedded), state.feed.unsqueeze(1)], -1)  # (B, 1, 2E)
        outputs, new = self.decoder_rnn(rnn_in, rnn_state)  # (B, T, D)
        hidden, cell = (new, None) if state.cell is None else new
        att = self.attention(
            outputs, state.keys, state.memory, mask=state.src_mask, keys_proj=state.keys_proj
        )
        vectors = self.attentional(outputs, att.context)
        assert att.weights is not None
        feed = vectors[:, -1] if state.feed is not None else None
        new_state = RNNState(hidden, cell, feed, state.memory, state.keys_proj, state.src_mask, state.keys)
        return vectors, att.weights, new_state, outputs

    def attentional(self, outputs: Tensor, context: Tensor) -> Tensor:
        """Step 4's h~ = tanh(W_c [h; c]): outputs (..., D), context (..., 2D) -> (..., E)."""
        return torch.tanh(self.attentional_pre(outputs, context))

    def attentional_pre(self, outputs: Tensor, context: Tensor) -> Tensor:
        """W_c [h; c] before the tanh: outputs (..., D), context (..., 2D) -> (..., E)."""
        return self.combine(torch.cat([outputs, context], -1))

    def context_values(self, memory: Tensor) -> Tensor:
        """What each source vector adds to W_c [h; c] per unit of attention (the value vectors that norm
        and value-zeroing maps weigh, Kobayashi et al. 2020): memory (B, S, 2D) -> (B, S, E)."""
        queries = self.combine.in_features - memory.shape[-1]
        return memory @ self.combine.weight[:, queries:].T

    def step(self, prev_tokens: Tensor, state: RNNState) -> tuple[Tensor, RNNState, Tensor]:
        """prev_tokens (B, 1) -> log_probs (B, V_out) over ``output.target_ids``, new state,
        attention (B, 1, S)."""
        vectors, weights, state = self._decode(self.embedding(prev_tokens), state)
        return torch.log_softmax(self.output(vectors[:, -1]), -1), state, weights

    def forward(self, src: Tensor, src_mask: Tensor, tgt_in: Tensor) -> Seq2SeqOutput:
        return self.forward_embedded(self.source_embedding(src), src_mask, tgt_in)

    def forward_embedded(self, src_embedded: Tensor, src_mask: Tensor, tgt_in: Tensor) -> Seq2SeqOutput:
        """``forward`` from source embeddings (B, S, E): logits (B, T, V_out), attention (B, T, S)."""
        trace = self.trace(src_embedded, src_mask, tgt_in)
        return Seq2SeqOutput(trace.logits, torch.cat(trace.weights, 1))

    def trace(self, src_embedded: Tensor, src_mask: Tensor, tgt_in: Tensor) -> RNNTrace:
        """The forward pass with what attention-map methods read (``RNNTrace``)."""
        state = self.encode_embedded(src_embedded, src_mask)
        embedded = self.embedding(tgt_in)  # (B, T, E)
        if not self.input_feeding:
            vectors, weights, _, outputs = self._decode_parts(embedded, state)
            maps, steps, queries = [weights], [vectors], [outputs]
        else:  # input feeding makes step t depend on step t-1's output: loop over T
            maps, steps, queries = [], [], []
            for t in range(embedded.shape[1]):
                vec, w, state, out = self._decode_parts(embedded[:, t : t + 1], state)
                steps.append(vec)
                maps.append(w)
                queries.append(out)
        vectors = torch.cat(steps, 1)
        logits = self.output(self.dropout(vectors))
        return RNNTrace(logits, maps, torch.cat(queries, 1), vectors, state.memory)
