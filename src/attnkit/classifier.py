"""Classify documents with a trained HAN checkpoint, with word and sentence attention."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch import Tensor, nn

from .classify_base import ClassifierBase
from .config import ExperimentConfig
from .data.documents import Document, Vocabulary, make_document_batch
from .device import model_device, resolve_device, to_device
from .errors import DeviceError
from .models.build import build_for_checkpoint, load_for_inference, restore
from .results import Classification
from .training.prior import prior_bias, stored_class_weights

__all__ = ["Classification", "Classifier"]


class Classifier(ClassifierBase):
    """A HAN checkpoint on torch; batching, prior correction and results are ``ClassifierBase``'s."""

    backend = "torch"

    def __init__(
        self,
        model: nn.Module,
        vocab: Vocabulary,
        labels: list[str],
        config: ExperimentConfig,
        path: str = "",
        prior_bias: Tensor | None = None,
    ) -> None:
        """``prior_bias`` (C,): subtracted from the model's logits before the softmax and argmax
        (``training.prior``; None = the model's own decision)."""
        self.model, self.vocab, self.labels, self.config, self.path = (
            model.eval(),
            vocab,
            labels,
            config,
            path,
        )
        self.prior_bias = prior_bias
        self.class_weights: list[float] = [1.0] * len(labels)  # the training loss's (prior correction)
        self.prior_correction = 0.0

    @classmethod
    def from_checkpoint(
        cls, path: str | Path, int8: bool = False, prior_correction: float | None = None, device: str = "cpu"
    ) -> Classifier:
        """``int8``: run with int8 weights (``models.quantize``). ``prior_correction``: tau in [0, 1] of
        ``training.prior`` (None = the checkpoint's own, 0 when it has none).
        ``device``: cpu, cuda[:N] or auto."""
        ckpt, config = load_for_inference(path, "classification")
        vocab, labels = Vocabulary(ckpt.vocabulary or []), list(ckpt.labels or [])
        model = build_for_checkpoint(ckpt, config, len(vocab), num_classes=len(labels))
        on = resolve_device(device)
        if int8 and on.type != "cpu":
            raise DeviceError("int8 weights run on the CPU only; use --device cpu")
        model = restore(model, ckpt, int8).to(on)
        bias = prior_bias(ckpt, prior_correction)
        classifier = cls(model, vocab, labels, config, str(path), bias)
        classifier.class_weights = stored_class_weights(ckpt) or [1.0] * len(classifier.labels)
        classifier.prior_correction = float(
            (ckpt.prior_correction or 0.0) if prior_correction is None else prior_correction
        )
        return classifier

    @torch.no_grad()
    def _scores(self, docs: Sequence[Document]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Uncorrected probabilities (B, C), word weights (B, N, W), sentence weights (B, N)."""
        batch = to_device(make_document_batch(docs, self.vocab), model_device(self.model))
        result = to_device(self.model(batch.words, batch.word_mask), "cpu")
        probs = torch.softmax(result.logits.float(), -1)
        return probs.numpy(), result.word_weights.float().numpy(), result.sentence_weights.float().numpy()
