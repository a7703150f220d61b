"""What models return: dataclasses, never attention stashed on modules."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from torch import Tensor

from ..search import State


@dataclass
class Seq2SeqOutput:
    """Teacher-forced forward pass.

    Shapes:
        logits (B, T, V_out) over ``output.target_ids``; attention (B, T, S): the RNN's attention, or the
        head average of the Transformer's decoder layer ``attention_layer`` cross-attention (None unless
        ``need_attention`` or ``all_layers``); layer_attention: every decoder layer's cross-attention
        (B, H, T, S), Transformer with ``all_layers`` only.
    """

    logits: Tensor
    attention: Tensor | None
    layer_attention: list[Tensor] = field(default_factory=list)


class Seq2SeqModel(Protocol):
    """The step protocol greedy and beam search drive (DESIGN.md)."""

    def encode(self, src: Tensor, src_mask: Tensor) -> State[Tensor]:
        """src (B, S), src_mask (B, S) -> the initial decoder state (memory included)."""
        ...

    def step(self, prev_tokens: Tensor, state: State[Tensor]) -> tuple[Tensor, State[Tensor], Tensor]:
        """prev_tokens (B, 1) token ids -> log_probs (B, V_out) over ``output.target_ids``,
        new state, attention (B, 1, S)."""
        ...
