"""Pre-norm Transformer encoder-decoder (Vaswani et al. 2017; pre-norm as in Xiong et al. 2020).

Built from attnkit's MultiHeadAttention and SinusoidalPositionalEncoding. Training uses the
fused attention kernel (no weights); decoding is incremental with a key/value cache and returns the
head-averaged cross-attention of one decoder layer (``attention_layer``), and per-layer, per-head
maps on request. A test checks cached decoding equals the full forward pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import cast

import torch
from torch import Tensor, nn

from ..attention import KeyValue, MultiHeadAttention, SinusoidalPositionalEncoding
from ..vocab import PAD
from .output import TiedOutput
from .outputs import Seq2SeqOutput


class FeedForward(nn.Sequential):
    def __init__(self, d_model: int, ff_size: int, dropout: float) -> None:
        super().__init__(
            nn.Linear(d_model, ff_size), nn.ReLU(), nn.Dropout(dropout), nn.Linear(ff_size, d_model)
        )


class EncoderLayer(nn.Module):
    """x + SelfAttn(LN(x)); x + FF(LN(x)). Shapes: x (B, S, D), mask (B, 1, S) -> (B, S, D)."""

    def __init__(self, d_model: int, num_heads: int, ff_size: int, dropout: float) -> None:
        super().__init__()
        self.self_norm, self.ff_norm = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ff = FeedForward(d_model, ff_size, dropout)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        return self.run(x, mask, need_weights=False)[0]

    def run(self, x: Tensor, mask: Tensor, need_weights: bool) -> tuple[Tensor, Tensor | None]:
        """``forward``, and the self-attention weights (B, H, S, S) with ``need_weights``."""
        h = self.self_norm(x)
        attended, weights = self.self_attn(h, h, h, mask=mask, need_weights=need_weights)
        x = x + self.dropout(attended)
        return x + self.dropout(self.ff(self.ff_norm(x))), weights


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention over the encoder memory, feed-forward; all pre-norm."""

    def __init__(self, d_model: int, num_heads: int, ff_size: int, dropout: float) -> None:
        super().__init__()
        self.self_norm, self.cross_norm, self.ff_norm = (nn.LayerNorm(d_model) for _ in range(3))
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ff = FeedForward(d_model, ff_size, dropout)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self, x: Tensor, self_kv: KeyValue | None, cross_kv: KeyValue, src_mask: Tensor, need_weights: bool
    ) -> tuple[Tensor, KeyValue, Tensor | None]:
        """x (B, T, D); self_kv: cached keys/values of earlier positions (None in training).

        Returns the output, the self-attention keys/values including x's, and cross weights (B, H, T, S).
        """
        out = self.run(x, self_kv, cross_kv, src_mask, need_weights, need_self=False)
        return out.output, out.kv, out.cross

    def run(
        self,
        x: Tensor,
        self_kv: KeyValue | None,
        cross_kv: KeyValue,
        src_mask: Tensor,
        need_weights: bool,
        need_self: bool,
    ) -> DecoderPass:
        """``forward`` with what attention-map methods read: self weights with ``need_self``."""
        h = self.self_norm(x)
        new_kv = self.self_attn.project_kv(h, h)
        full_kv = new_kv if self_kv is None else self_kv.append(new_kv)
        causal = self_kv is None and x.shape[1] > 1  # with a cache, one new position sees all keys
        attended, self_weights = self.self_attn(h, kv=full_kv, need_weights=need_self, is_causal=causal)
        x = x + self.dropout(attended)
        attended, weights = self.cross_attn(
            self.cross_norm(x), kv=cross_kv, mask=src_mask, need_weights=need_weights
        )
        return DecoderPass(self.finish(x + self.dropout(attended)), full_kv, weights, self_weights, x)

    def finish(self, x: Tensor) -> Tensor:
        """The feed-forward sublayer with its residual: (..., D) -> (..., D)."""
        return x + self.dropout(self.ff(self.ff_norm(x)))

    def cross_values(self, memory: Tensor) -> Tensor:
        """Each head's value vectors of the source after the output projection, the vectors norm and
        value-zeroing maps weigh: memory (B, S, D) -> (B, H, S, D)."""
        return self.cross_attn.value_outputs(self.cross_attn.project_kv(memory, memory).value)

    def cross_bias(self) -> Tensor:
        """The cross-attention output projection's bias (D,): what attending adds besides the values."""
        return self.cross_attn.out_proj.bias


@dataclass
class DecoderPass:
    """One decoder layer's output (B, T, D), self-attention keys/values, cross weights (B, H, T, S),
    self weights (B, H, T, T) and the residual stream entering the cross-attention sublayer (B, T, D)."""

    output: Tensor
    kv: KeyValue
    cross: Tensor | None
    self_weights: Tensor | None
    before_cross: Tensor


@dataclass
class TransformerState:
    """Shapes: memory (B, S, D), src_mask (B, 1, S), cross/self caches per layer (B, H, S|t, Dh); offset:
    the next target position (a (1,) int64 tensor in a traced step graph, which has no memory: a step
    reads only the cross keys/values)."""

    memory: Tensor | None
    src_mask: Tensor
    cross: list[KeyValue]
    cache: list[KeyValue] | None
    offset: int | Tensor

    def _map(self, fn) -> TransformerState:  # type: ignore[no-untyped-def]
        def kv(x: KeyValue) -> KeyValue:
            return KeyValue(fn(x.key), fn(x.value))

        cache = None if self.cache is None else [kv(c) for c in self.cache]
        memory = None if self.memory is None else fn(self.memory)
        return TransformerState(memory, fn(self.src_mask), [kv(c) for c in self.cross], cache, self.offset)

    def reorder(self, index: Tensor) -> TransformerState:
        return self._map(lambda t: t.index_select(0, index))

    def expand(self, beam: int) -> TransformerState:
        return self._map(lambda t: t.repeat_interleave(beam, 0))


@dataclass
class TransformerTrace:
    """Shapes: logits (B, T, V_out); encoder: per layer self weights (B, H, S, S); memory, the encoder's
    output (B, S, D); passes: per decoder layer its ``DecoderPass`` (cross weights (B, H, T, S), self
    weights (B, H, T, T), ...)."""

    logits: Tensor
    encoder: list[Tensor]
    memory: Tensor
    passes: list[DecoderPass]

    @property
    def decoder(self) -> list[Tensor]:
        return [cast(Tensor, p.self_weights) for p in self.passes]

    @property
    def cross(self) -> list[Tensor]:
        return [cast(Tensor, p.cross) for p in self.passes]


class TransformerSeq2Seq(nn.Module):
    """Shapes (forward): src (B, S), src_mask (B, S), tgt_in (B, T) -> logits (B, T, V_out),
    attention (B, T, S) of ``attention_layer`` when ``need_attention``; per layer (B, H, T, S)."""

    def __init__(
        self,
        vocab_size: int,
        d_model: int = 256,
        num_heads: int = 4,
        ff_size: int = 1024,
        encoder_layers: int = 3,
        decoder_layers: int = 3,
        dropout: float = 0.1,
        attention_layer: int = -1,
        target_ids: list[int] | None = None,
        src_vocab_size: int | None = None,
    ) -> None:
        super().__init__()
        self.d_model = d_model
        self.attention_layer = attention_layer % decoder_layers
        self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=PAD)
        # A separate source vocabulary gets its own table; ``embedding`` is then the target side's.
        self.src_embedding = None if src_vocab_size is None else nn.Embedding(src_vocab_size, d_model, PAD)
        for table in (self.embedding, self.src_embedding):
            if table is not None:
                nn.init.normal_(table.weight, std=d_model**-0.5)
        self.positions = SinusoidalPositionalEncoding(d_model)
        self.dropout = nn.Dropout(dropout)
        self.encoder = nn.ModuleList(
            EncoderLayer(d_model, num_heads, ff_size, dropout) for _ in range(encoder_layers)
        )
        self.decoder = nn.ModuleList(
            DecoderLayer(d_model, num_heads, ff_size, dropout) for _ in range(decoder_layers)
        )
        self.encoder_norm, self.decoder_norm = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.output = TiedOutput(self.embedding, target_ids)

    @property
    def attention_layers(self) -> int:
        """Decoder layers with their own cross-attention maps (forward(all_layers=True) returns each)."""
        return len(self.decoder)

    @property
    def attention_heads(self) -> int:
        return cast(DecoderLayer, self.decoder[0]).cross_attn.num_heads

    def _embed(self, tokens: Tensor, offset: int | Tensor = 0) -> Tensor:
        return self.dropout(self.positions(self.embedding(tokens) * math.sqrt(self.d_model), offset))

    def source_embedding(self, src: Tensor) -> Tensor:
        """src (B, S) -> the source table's rows (B, S, D), before scaling and positions."""
        return (self.embedding if self.src_embedding is None else self.src_embedding)(src)

    def encode(self, src: Tensor, src_mask: Tensor) -> TransformerState:
        return self.encode_embedded(self.source_embedding(src), src_mask)

    def encode_embedded(self, embedded: Tensor, src_mask: Tensor) -> TransformerState:
        """``encode`` from ``source_embedding`` rows (B, S, D): where gradient attributions start."""
        return self.state_from_output(self.encode_layers(self._embed_source(embedded), src_mask, 0), src_mask)

    def _embed_source(self, embedded: Tensor) -> Tensor:
        return self.dropout(self.positions(embedded * math.sqrt(self.d_model), 0))

    def encoder_inputs(self, src: Tensor, src_mask: Tensor) -> list[Tensor]:
        """What each encoder layer reads, bottom first, and the last layer's output: ``len(encoder) + 1``
        tensors (B, S, D) (``evaluation.head_batches`` shares them between head masks)."""
        mask, x = src_mask.unsqueeze(1), self._embed_source(self.source_embedding(src))
        inputs = [x]
        for layer in self.encoder:
            inputs.append(layer(inputs[-1], mask))
        return inputs

    def encode_layers(self, x: Tensor, src_mask: Tensor, start: int) -> Tensor:
        """Encoder layers ``start`` and up from that layer's input x (B, S, D) -> (B, S, D), before the
        final norm."""
        mask = src_mask.unsqueeze(1)  # (B, 1, S)
        for layer in self.encoder[start:]:
            x = layer(x, mask)
        return x

    def state_from_output(self, x: Tensor, src_mask: Tensor) -> TransformerState:
        """The decoding state from the last encoder layer's output (B, S, D): the final norm and each
        decoder layer's projected cross keys/values."""
        mask = src_mask.unsqueeze(1)  # (B, 1, S)
        memory = self.encoder_norm(x)  # (B, S, D)
        cross = [cast(DecoderLayer, layer).cross_attn.project_kv(memory, memory) for layer in self.decoder]
        return TransformerState(memory, mask, cross, None, 0)

    def _decode(
        self, tgt: Tensor, state: TransformerState, need: set[int]
    ) -> tuple[Tensor, TransformerState, list[Tensor]]:
        x = self._embed(tgt, state.offset)
        caches, maps = [], []
        for i, layer in enumerate(self.decoder):
            past = None if state.cache is None else state.cache[i]
            x, kv, weights = layer(x, past, state.cross[i], state.src_mask, need_weights=i in need)
            caches.append(kv)
            if weights is not None:
                maps.append(weights)
        new = TransformerState(state.memory, state.src_mask, state.cross, caches, state.offset + tgt.shape[1])
        return self.decoder_norm(x), new, maps

    def decode_hidden(self, tgt_in: Tensor, state: TransformerState) -> Tensor:
        """Teacher-forced decoder output after its norm, before the output layer: tgt_in (B, T) ->
        (B, T, D)."""
        return self._decode(tgt_in, state, set())[0]

    @torch.no_grad()
    def self_attention_maps(
        self, src: Tensor, src_mask: Tensor, tgt_in: Tensor
    ) -> tuple[list[Tensor], list[Tensor]]:
        """Every encoder layer's (B, H, S, S) and decoder layer's (B, H, T, T) self-attention weights."""
        trace = self.trace(self.source_embedding(src), src_mask, tgt_in)
        return trace.encoder, trace.decoder

    def trace(self, src_embedded: Tensor, src_mask: Tensor, tgt_in: Tensor) -> TransformerTrace:
        """The forward pass from ``source_embedding`` rows (B, S, D) with every attention map kept in
        the autograd graph (gradient-weighted maps differentiate through them)."""
        mask, x = src_mask.unsqueeze(1), self._embed_source(src_embedded)  # (B, 1, S), (B, S, D)
        encoder = []
        for layer in self.encoder:
            x, weights = cast(EncoderLayer, layer).run(x, mask, need_weights=True)
            encoder.append(cast(Tensor, weights))
        memory = self.encoder_norm(x)
        y, passes = self._embed(tgt_in, 0), []
        for layer in self.decoder:
            kv = cast(DecoderLayer, layer).cross_attn.project_kv(memory, memory)
            passes.append(cast(DecoderLayer, layer).run(y, None, kv, mask, True, need_self=True))
            y = passes[-1].output
        logits = self.output(self.decoder_norm(y))
        return TransformerTrace(logits, encoder, memory, passes)

    def step_layers(self, prev: Tensor, state: TransformerState) -> tuple[Tensor, Tensor, TransformerState]:
        """``step`` with every decoder layer's cross-attention, traceable as written (the exported step
        graph wraps it): the output layer without its decoding cache, ``state.offset`` a tensor there.
        prev (B, 1) -> log_probs (B, V_out), layer_attention (B, L, H, S), the new state."""
        hidden, new, maps = self._decode(prev, state, set(range(len(self.decoder))))
        log_probs = torch.log_softmax(self.output.logits(hidden[:, -1]), -1)
        return log_probs, torch.stack([weights[:, :, 0] for weights in maps], 1), new

    def step(self, prev_tokens: Tensor, state: TransformerState) -> tuple[Tensor, TransformerState, Tensor]:
        """prev_tokens (B, 1) -> log_probs (B, V_out), new state (cache grown by one), attention (B, 1, S)."""
        hidden, state, maps = self._decode(prev_tokens, state, {self.attention_layer})
        return torch.log_softmax(self.output(hidden[:, -1]), -1), state, maps[0].mean(1)

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor,
        tgt_in: Tensor,
        need_attention: bool = False,
        all_layers: bool = False,
    ) -> Seq2SeqOutput:
        return self.forward_embedded(self.source_embedding(src), src_mask, tgt_in, need_attention, all_layers)

    def forward_embedded(
        self,
        src_embedded: Tensor,
        src_mask: Tensor,
        tgt_in: Tensor,
        need_attention: bool = False,
        all_layers: bool = False,
    ) -> Seq2SeqOutput:
        """``forward`` from ``source_embedding`` rows (B, S, D)."""
        state = self.encode_embedded(src_embedded, src_mask)
        need = (
            set(range(len(self.decoder)))
            if all_layers
            else ({self.attention_layer} if need_attention else set())
        )
        hidden, _, maps = self._decode(tgt_in, state, need)
        chosen = None
        if maps:
            chosen = (maps[self.attention_layer] if all_layers else maps[0]).mean(1)  # (B, T, S)
        return Seq2SeqOutput(self.output(hidden), chosen, maps if all_layers else [])
