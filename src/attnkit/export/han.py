"""Export a HAN classifier (one HAN or an ensemble) as one graph with its word vocabulary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from ..checkpoint import load_checkpoint
from ..classifier import Classifier
from ..config import to_dict
from ..training.prior import stored_class_weights
from ..vocab import WORD_PAD
from .graphs import HANGraph
from .onnx_files import check, quantized, trace


def export_han(path: Path, root: Path, int8: bool) -> tuple[Classifier, dict[str, Any]]:
    classifier = Classifier.from_checkpoint(path)
    # Two documents: the second has a padded (empty) sentence and padded words, so masking is traced.
    words = torch.tensor([[[5, 6, 7], [8, 9, 10]], [[11, 12, 0], [0, 0, 0]]])
    words = torch.where(words > 0, (words - 1) % (len(classifier.vocab) - 1) + 1, words)  # ids that exist
    mask = words != WORD_PAD
    axes = {
        "words": {0: "batch", 1: "sentences", 2: "words"},
        "word_mask": {0: "batch", 1: "sentences", 2: "words"},
        "probabilities": {0: "batch"},
        "word_weights": {0: "batch", 1: "sentences", 2: "words"},
        "sentence_weights": {0: "batch", 1: "sentences"},
    }
    outputs = ["probabilities", "word_weights", "sentence_weights"]
    trace(
        HANGraph(classifier.model), (words, mask), root / "model.onnx", ["words", "word_mask"], outputs, axes
    )
    check(root / "model.onnx")
    graphs = {"fp32": {"model": "model.onnx"}}
    if int8:
        graphs["int8"] = {"model": quantized(root, "model.onnx", "model.int8.onnx")}
    (root / "vocabulary.json").write_text(json.dumps(classifier.vocab.words, ensure_ascii=False), "utf-8")
    ckpt = load_checkpoint(path)
    meta = {
        "config": to_dict(classifier.config),
        "labels": classifier.labels,
        "vocabulary": "vocabulary.json",
        "class_weights": stored_class_weights(ckpt),
        "prior_correction": float(ckpt.prior_correction or 0.0),
        "ensemble_members": len(getattr(classifier.model, "members", [classifier.model])),
    }
    io = {"inputs": ["words", "word_mask"], "outputs": outputs}
    return classifier, {"kind": "han", "graphs": graphs, "io": io, "meta": meta}
