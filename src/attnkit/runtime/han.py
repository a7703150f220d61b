"""Classify with an ONNX export of a HAN (or a HAN ensemble): probabilities, word and sentence weights."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from ..classify_base import ClassifierBase
from ..data.documents import Document, Vocabulary, document_ids
from ..results import Classification, log_prior
from ..vocab import WORD_PAD
from .manifest import ExportError, Manifest, read_manifest
from .sessions import parallel_map, sessions, threads

# documents from which a lone batch uses every thread (shipped HAN, 1 vs 2 threads: 8 documents 13.9 vs
# 13.0 ms, 16: 30.3 vs 22.2, 64: 165 vs 111)
HAN_LARGE_ROWS = 16

__all__ = ["Classification", "OnnxClassifier"]
T = TypeVar("T")
R = TypeVar("R")


class OnnxClassifier(ClassifierBase):
    """A classification export run by onnxruntime; the same results as ``attnkit.classifier.Classifier``.

    ``prior_correction``: tau in [0, 1] (None = the model's own setting); see ``training.prior``."""

    backend = "onnx"

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

    def _scores(self, docs: Sequence[Document]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Uncorrected probabilities (B, C), word weights (B, N, W), sentence weights (B, N)."""
        words = document_ids(docs, self.vocab)
        probs, word_weights, sentence_weights = self.session.run(
            None, {"words": words, "word_mask": words != WORD_PAD}
        )
        return probs, word_weights, sentence_weights

    def _map_batches(self, fn: Callable[[T], R], batches: list[T]) -> Iterator[R]:
        """Batches in parallel threads, one graph thread each (``runtime.sessions``)."""
        return parallel_map(fn, batches, self.workers)
