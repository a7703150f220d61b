"""Classify with an ONNX export of a HAN (or a HAN ensemble): probabilities, word and sentence weights."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..data.documents import Document, Vocabulary, document_from_text, document_ids
from ..log import progress
from ..results import Classification, check_texts, classification, log_prior
from .manifest import ExportError, Manifest, read_manifest
from .sessions import parallel_map, sessions, threads

# documents from which a lone batch uses every thread (shipped HAN, 1 vs 2 threads: 8 documents 13.9 vs
# 13.0 ms, 16: 30.3 vs 22.2, 64: 165 vs 111)
HAN_LARGE_ROWS = 16

__all__ = ["Classification", "OnnxClassifier"]


class OnnxClassifier:
    """A classification export run by onnxruntime; the same results as ``attnkit.classifier.Classifier``.

    ``prior_correction``: tau in [0, 1] (None = the model's own setting); see ``training.prior``."""

    def __init__(
        self,
        manifest: Manifest,
        variant: str = "fp32",
        prior_correction: float | None = None,
        intra_threads: int | None = None,
    ) -> None:
        if manifest.task != "classification":
            raise ExportError(f"{manifest.root}: a {manifest.task} export, not a classifier")
        meta = manifest.meta
        self.manifest, self.path = manifest, str(manifest.root)
        self.labels: list[str] = list(meta["labels"])
        words = json.loads(manifest.file(meta["vocabulary"]).read_text(encoding="utf-8"))
        self.vocab = Vocabulary(words)
        self.class_weights: list[float] = list(meta.get("class_weights") or [1.0] * len(self.labels))
        tau = meta.get("prior_correction", 0.0) if prior_correction is None else prior_correction
        self.prior_correction = float(tau)
        self.prior_bias = log_prior(self.class_weights, tau)
        self.session = sessions(manifest, variant, intra_threads, large_rows=HAN_LARGE_ROWS)["model"]
        self.workers = intra_threads or threads()  # batches classified at once

    @classmethod
    def from_export(
        cls, path: str | Path, int8: bool = False, prior_correction: float | None = None
    ) -> OnnxClassifier:
        return cls(read_manifest(path, "classification"), "int8" if int8 else "fp32", prior_correction)

    def documents(self, texts: Sequence[str]) -> list[Document]:
        return [document_from_text(t) for t in texts]

    def scores(self, docs: Sequence[Document]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Uncorrected probabilities (B, C), word weights (B, N, W), sentence weights (B, N)."""
        words = document_ids(docs, self.vocab)
        probs, word_weights, sentence_weights = self.session.run(
            None, {"words": words, "word_mask": words != 0}
        )
        return probs, word_weights, sentence_weights

    def classify_documents(self, docs: Sequence[Document], batch_size: int = 64) -> list[Classification]:
        """Documents batched by size (fewer padded sentences and words for the graph), the batches in
        parallel threads (``runtime.sessions``), answered in order."""
        order = sorted(
            range(len(docs)), key=lambda i: (len(docs[i].sentences), max(map(len, docs[i].sentences)))
        )
        out: list[Classification | None] = [None] * len(docs)
        index = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
        scored = parallel_map(self.scores, [[docs[i] for i in chunk] for chunk in index], self.workers)
        for chunk, (probs, words, sentences) in progress(zip(index, scored), len(index), "classifying"):
            if self.prior_bias is not None:  # softmax(log p - b): the correction on probabilities
                probs = probs * np.exp(-self.prior_bias)
                probs = probs / probs.sum(-1, keepdims=True)
            for j, i in enumerate(chunk):
                out[i] = classification(docs[i], self.labels, probs[j], words[j], sentences[j])
        return [r for r in out if r is not None]

    def classify(self, texts: Sequence[str], batch_size: int = 64) -> list[Classification]:
        """Predict each text's label with its word and sentence attention."""
        check_texts(texts)
        return self.classify_documents(self.documents(texts), batch_size)
