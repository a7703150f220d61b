"""Classify documents with a trained HAN checkpoint, with word and sentence attention."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from .config import ExperimentConfig
from .data.documents import (
    MAX_SENTENCES,
    MAX_WORDS,
    Document,
    Vocabulary,
    document_from_text,
    make_document_batch,
)
from .device import model_device, resolve_device, to_device
from .models.build import build_for_checkpoint, load_for_inference, restore
from .training.prior import prior_bias


@dataclass
class Classification:
    """One document: predicted label, class probabilities, sentences as words, and attention."""

    text: str
    label: str
    probabilities: dict[str, float]
    sentences: list[list[str]]
    sentence_weights: list[float]
    word_weights: list[list[float]]
    # words the model did not read (after the 60th word of a sentence or the 30th sentence): weight 0
    unread_words: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "label": self.label,
            "probabilities": {k: round(v, 5) for k, v in self.probabilities.items()},
            "sentences": self.sentences,
            "sentence_weights": [round(w, 5) for w in self.sentence_weights],
            "word_weights": [[round(w, 5) for w in row] for row in self.word_weights],
            "unread_words": self.unread_words,
        }


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
            raise ValueError("int8 weights run on the CPU only; use --device cpu")
        model = restore(model, ckpt, int8).to(on)
        bias = prior_bias(ckpt, prior_correction)
        return cls(model, vocab, list(ckpt["labels"]), config, str(path), bias)

    def documents(self, texts: Sequence[str]) -> list[Document]:
        return [document_from_text(t) for t in texts]

    @torch.no_grad()
    def classify_documents(self, docs: Sequence[Document], batch_size: int = 64) -> list[Classification]:
        out: list[Classification] = []
        for start in range(0, len(docs), batch_size):
            chunk = docs[start : start + batch_size]
            batch = to_device(make_document_batch(chunk, self.vocab), model_device(self.model))
            result = to_device(self.model(batch.words, batch.word_mask), "cpu")
            logits = result.logits.float()
            logits = logits if self.prior_bias is None else logits - self.prior_bias
            probs = torch.softmax(logits, -1)  # (B, C)
            for i, doc in enumerate(chunk):
                out.append(self._result(doc, probs[i], result.word_weights[i], result.sentence_weights[i]))
        return out

    def _result(self, doc: Document, probs: Tensor, words: Tensor, sentences: Tensor) -> Classification:
        """Shapes: probs (C,), words (N, W), sentences (N,) of one document in its batch. Every word of
        the document is listed; the ones past the model's limits get weight 0 and are counted."""
        read = [min(len(s), MAX_WORDS) if j < MAX_SENTENCES else 0 for j, s in enumerate(doc.sentences)]
        word_weights = [
            (words[j, :n].tolist() if n else []) + [0.0] * (len(s) - n)
            for j, (s, n) in enumerate(zip(doc.sentences, read))
        ]
        n_read = min(len(doc.sentences), MAX_SENTENCES)
        sentence_weights = sentences[:n_read].tolist() + [0.0] * (len(doc.sentences) - n_read)
        return Classification(
            text=doc.text,
            label=self.labels[int(probs.argmax())],
            probabilities={c: float(p) for c, p in zip(self.labels, probs)},
            sentences=[list(s) for s in doc.sentences],
            sentence_weights=sentence_weights,
            word_weights=word_weights,
            unread_words=sum(len(s) for s in doc.sentences) - sum(read),
        )

    def classify(self, texts: Sequence[str], batch_size: int = 64) -> list[Classification]:
        """Predict each text's label with its word and sentence attention."""
        empty = [i for i, t in enumerate(texts) if not t.strip()]
        if empty:
            raise ValueError(f"text {empty[0] + 1} is empty: nothing to classify")
        return self.classify_documents(self.documents(texts), batch_size)
