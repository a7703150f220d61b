"""One base for classification (torch-free): text in, ``Classification``s out, over whatever scores a
backend computes (the torch HAN, its ONNX export, a Hugging Face encoder).

The base owns the loop every backend shares: documents from texts, batches of similar size (answered in
input order), prior correction on the probabilities (``training.prior``: softmax(logits - tau log w)
equals the probabilities times w ** -tau, renormalized) and the result objects. A backend supplies only
``_scores``: uncorrected probabilities and its attention for a batch of documents.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import numpy as np

from .data.documents import MAX_SENTENCES, MAX_WORDS, Document, document_from_text
from .log import progress
from .results import Classification, apply_prior, check_texts, classification

T = TypeVar("T")
R = TypeVar("R")


class ClassifierBase:
    """Subclasses set ``labels``, ``class_weights``, ``prior_correction``, ``prior_bias`` (tau log w
    (C,), or None) and ``path``, and implement ``_scores``."""

    labels: list[str]
    class_weights: list[float]
    prior_correction: float = 0.0
    prior_bias: Any = None
    path: str = ""
    limits: tuple[int, int] = (MAX_SENTENCES, MAX_WORDS)  # what the model reads: sentences, words each

    def _scores(self, docs: Sequence[Document]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The backend's step: uncorrected probabilities (B, C), word weights (B, N, W) and sentence
        weights (B, N) of a batch of documents."""
        raise NotImplementedError

    def _map_batches(self, fn: Callable[[T], R], batches: list[T]) -> Iterator[R]:
        """``map(fn, batches)`` in order; a backend may run batches in parallel."""
        return map(fn, batches)

    def documents(self, texts: Sequence[str]) -> list[Document]:
        return [document_from_text(t) for t in texts]

    def corrected(self, probs: np.ndarray) -> np.ndarray:
        """Probabilities (B, C) under the classifier's prior correction."""
        bias = None if self.prior_bias is None else np.asarray(self.prior_bias, dtype=np.float32)
        return apply_prior(probs, bias)

    def classify_documents(self, docs: Sequence[Document], batch_size: int = 64) -> list[Classification]:
        """Documents batched by size (fewer padded sentences and words), answered in input order."""
        order = sorted(
            range(len(docs)),
            key=lambda i: (len(docs[i].sentences), max(map(len, docs[i].sentences), default=0)),
        )
        index = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
        scored = self._map_batches(self._scores, [[docs[i] for i in chunk] for chunk in index])
        out: list[Classification | None] = [None] * len(docs)
        for chunk, (probs, words, sentences) in progress(zip(index, scored), len(index), "classifying"):
            probs = self.corrected(np.asarray(probs, dtype=np.float32))
            for j, i in enumerate(chunk):
                out[i] = classification(docs[i], self.labels, probs[j], words[j], sentences[j], self.limits)
        return [r for r in out if r is not None]

    def classify(self, texts: Sequence[str], batch_size: int = 64) -> list[Classification]:
        """Predict each text's label with its word and sentence attention."""
        check_texts(texts)
        return self.classify_documents(self.documents(texts), batch_size)
