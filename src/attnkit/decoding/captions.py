"""A Captioner through the one search: greedy and beam captions with their attention over the grid."""

from __future__ import annotations

import numpy as np
from torch import nn

from .. import search
from ..device import model_device
from ..models.captioner import Captioner, CaptionSteps
from .common import TorchStepper


def caption_stepper(model: Captioner) -> TorchStepper:
    return TorchStepper(CaptionSteps(model), model_device(model))


def cells(model: Captioner, images: np.ndarray) -> np.ndarray:
    """The attention positions of a batch: (B, L) all True (every grid cell may be attended)."""
    h, w = model.encoder.grid((images.shape[2], images.shape[3]))
    return np.ones((images.shape[0], h * w), dtype=bool)


def greedy_captions(model: nn.Module, images: np.ndarray, max_len: int) -> list[search.Hypothesis]:
    """images (B, C, H, W) float32 -> B hypotheses; attention (T + 1, L) incl. the </s> row."""
    assert isinstance(model, Captioner)
    return search.greedy(
        caption_stepper(model), images, cells(model, images), max_ratio=0.0, max_extra=max_len
    )


def beam_captions(
    model: nn.Module, images: np.ndarray, max_len: int, beam_size: int, n_best: int = 1, alpha: float = 1.0
) -> list[list[search.Hypothesis]]:
    assert isinstance(model, Captioner)
    stepper = caption_stepper(model)
    return search.beam(
        stepper, images, cells(model, images), beam_size, alpha, n_best, max_ratio=0.0, max_extra=max_len
    )
