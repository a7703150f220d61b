"""Classify documents with a trained HAN checkpoint, with word and sentence attention."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch
from torch import Tensor, nn

from .config import ExperimentConfig
from .data.documents import (
    Document,
    Vocabulary,
    document_from_text,
    make_document_batch,
)
from .device import model_device, resolve_device, to_device
from .errors import DeviceError
from .log import progress
from .models.build import build_for_checkpoint, load_for_inference, restore
from .results import Classification, check_texts, classification
from .training.prior import prior_bias, stored_class_weights

__all__ = ["Classification", "Classifier"]


class Classifier:
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
        vocab = Vocabulary(ckpt["vocabulary"])
        model = build_for_checkpoint(ckpt, config, len(vocab), num_classes=len(ckpt["labels"]))
        on = resolve_device(device)
        if int8 and on.type != "cpu":
            raise DeviceError("int8 weights run on the CPU only; use --device cpu")
        model = restore(model, ckpt, int8).to(on)
        bias = prior_bias(ckpt, prior_correction)
        classifier = cls(model, vocab, list(ckpt["labels"]), config, str(path), bias)
        classifier.class_weights = stored_class_weights(ckpt) or [1.0] * len(classifier.labels)
        classifier.prior_correction = float(
            ckpt.get("prior_correction", 0.0) if prior_correction is None else prior_correction
        )
        return classifier

    def documents(self, texts: Sequence[str]) -> list[Document]:
        return [document_from_text(t) for t in texts]

    @torch.no_grad()
    def classify_documents(self, docs: Sequence[Document], batch_size: int = 64) -> list[Classification]:
        out: list[Classification] = []
        for start in progress(range(0, len(docs), batch_size), -(-len(docs) // batch_size), "classifying"):
            chunk = docs[start : start + batch_size]
            batch = to_device(make_document_batch(chunk, self.vocab), model_device(self.model))
            result = to_device(self.model(batch.words, batch.word_mask), "cpu")
            logits = result.logits.float()
            logits = logits if self.prior_bias is None else logits - self.prior_bias
            probs = torch.softmax(logits, -1)  # (B, C)
            words, sentences = result.word_weights.float().numpy(), result.sentence_weights.float().numpy()
            for i, doc in enumerate(chunk):
                out.append(classification(doc, self.labels, probs[i].numpy(), words[i], sentences[i]))
        return out

    def classify(self, texts: Sequence[str], batch_size: int = 64) -> list[Classification]:
        """Predict each text's label with its word and sentence attention."""
        check_texts(texts)
        return self.classify_documents(self.documents(texts), batch_size)
