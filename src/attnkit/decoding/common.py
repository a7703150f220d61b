"""Torch models as ``attnkit.search.Stepper``s: the one NumPy search drives them through this adapter.

Tensors cross to NumPy once per step (the log-probabilities and the attention row, on the CPU) and the
search's row indices cross back; the model's state stays where the model is (CPU or GPU).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from .. import search
from ..search import Hypothesis, length_penalty, output_vocabulary

__all__ = ["Hypothesis", "TorchState", "TorchStepper", "length_penalty", "max_lengths", "output_vocabulary"]


def max_lengths(src_mask: Tensor, ratio: float, extra: int) -> Tensor:
    """Per-sentence output limits (``attnkit.search.max_lengths``). Shapes: src_mask (B, S) -> (B,)."""
    return torch.from_numpy(search.max_lengths(src_mask.cpu().numpy(), ratio, extra))


@dataclass
class TorchState:
    inner: Any  # the model's own state (RNNState, TransformerState, ...)
    device: torch.device

    def reorder(self, index: np.ndarray) -> TorchState:
        return TorchState(self.inner.reorder(torch.from_numpy(index).to(self.device)), self.device)

    def expand(self, beam: int) -> TorchState:
        return TorchState(self.inner.expand(beam), self.device)


class TorchStepper:
    """A model with ``encode``/``step`` (``models.outputs.Seq2SeqModel``) on ``device``, seen as a Stepper."""

    def __init__(self, model: Any, device: torch.device) -> None:
        self.model, self.device = model, device
        self.target_ids = model.output.target_ids.cpu().numpy()

    @torch.no_grad()
    def encode(self, src: np.ndarray, src_mask: np.ndarray) -> TorchState:
        on = self.device
        state = self.model.encode(torch.from_numpy(src).to(on), torch.from_numpy(src_mask).to(on))
        return TorchState(state, on)

    @torch.no_grad()
    def step(
        self, prev: np.ndarray, state: TorchState, k: int
    ) -> tuple[np.ndarray, np.ndarray, TorchState, np.ndarray]:
        log_probs, inner, attention = self.model.step(torch.from_numpy(prev).to(self.device), state.inner)
        values, ids = torch.topk(log_probs.float(), k, dim=-1)  # (B, k): only these cross to NumPy
        out = values.cpu().numpy(), ids.cpu().numpy(), attention.float().cpu().numpy()
        return out[0], out[1], TorchState(inner, self.device), out[2]

    @torch.no_grad()
    def step_log_probs(self, prev: np.ndarray, state: TorchState) -> tuple[np.ndarray, TorchState]:
        """The whole next-token distribution (B, V_out) over ``target_ids`` (forced scoring)."""
        log_probs, inner, _ = self.model.step(torch.from_numpy(prev).to(self.device), state.inner)
        return log_probs.float().cpu().numpy(), TorchState(inner, self.device)


def _numpy(src: Tensor, src_mask: Tensor) -> tuple[np.ndarray, np.ndarray]:
    return src.cpu().numpy().astype(np.int64), src_mask.cpu().numpy().astype(bool)


@torch.no_grad()
def greedy_search(
    model: Any, src: Tensor, src_mask: Tensor, max_ratio: float = 1.5, max_extra: int = 10
) -> list[Hypothesis]:
    """``attnkit.search.greedy`` over a torch model. Shapes: src (B, S), src_mask (B, S) -> B hypotheses,
    attention (T + 1, S_i) each (NumPy)."""
    return search.greedy(TorchStepper(model, src.device), *_numpy(src, src_mask), max_ratio, max_extra)


@torch.no_grad()
def beam_search(
    model: Any,
    src: Tensor,
    src_mask: Tensor,
    beam_size: int = 5,
    alpha: float = 1.0,
    n_best: int = 1,
    max_ratio: float = 1.5,
    max_extra: int = 10,
) -> list[list[Hypothesis]]:
    """``attnkit.search.beam`` over a torch model. Shapes: src (B, S), src_mask (B, S) -> per sentence, its
    ``n_best`` hypotheses, best first."""
    stepper = TorchStepper(model, src.device)
    return search.beam(stepper, *_numpy(src, src_mask), beam_size, alpha, n_best, max_ratio, max_extra)
