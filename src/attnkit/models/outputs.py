"""What models return: dataclasses, never attention stashed on modules."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from torch import Tensor


@dataclass
class Seq2SeqOutput:
    """Teacher-forced forward pass.

    Shapes:
        logits (B, T, V); attention (B, T, S) (Transformer: head-average of ``attention_layer``);
        layer_attention: per layer (B, H, T, S), Transformer only, when requested.
    """

    logits: Tensor
    attention: Tensor | None
    layer_attention: list[Tensor] = field(default_factory=list)


class DecoderState(Protocol):
    """Whatever a model carries between decoder steps; decoding only reorders and expands it."""

    def reorder(self, index: Tensor) -> DecoderState:
        """Select batch rows (B',) -> a state for B' rows (beam search reordering)."""
        ...

    def expand(self, beam: int) -> DecoderState:
        """Repeat each batch row ``beam`` times, adjacently: B -> B * beam."""
        ...


class Seq2SeqModel(Protocol):
    """The step protocol greedy and beam search drive (DESIGN.md)."""

    def encode(self, src: Tensor, src_mask: Tensor) -> DecoderState:
        """src (B, S), src_mask (B, S) -> the initial decoder state (memory included)."""
        ...

    def step(self, prev_tokens: Tensor, state: DecoderState) -> tuple[Tensor, DecoderState, Tensor]:
        """prev_tokens (B, 1) token ids -> log_probs (B, V_out) over ``output.target_ids``,
        new state, attention (B, 1, S)."""
        ...
