"""After writing an export: run it with the runtime and compare with the torch model it came from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..runtime import load_export

PROBE_SENTENCES = [
    "The cat sits on the mat.",
    "I don't know what you are talking about, but I would like to hear more.",
    "Where is the station?",
]
PROBE_REVIEWS = [
    "Runs small. Returned it.",
    "I love this dress! The fabric is soft and the fit is perfect. Would buy again.",
]


def verify(model: Any, root: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """Agreement of every variant with ``model`` (a Translator or Classifier) on probe inputs."""
    report: dict[str, Any] = {}
    for variant in manifest["graphs"]:
        onnx = load_export(root, int8=variant == "int8")
        if manifest["kind"] == "han":
            a, b = model.classify(PROBE_REVIEWS), onnx.classify(PROBE_REVIEWS)
            prob = max(
                abs(x.probabilities[c] - y.probabilities[c]) for x, y in zip(a, b) for c in x.probabilities
            )
            report[variant] = {
                "same_labels": [x.label for x in a] == [y.label for y in b],
                "max_probability_diff": float(prob),
            }
            continue
        a, b = model.translate(PROBE_SENTENCES, beam=5), onnx.translate(PROBE_SENTENCES, beam=5)
        same = [x.translation == y.translation for x, y in zip(a, b)]
        diffs = [
            np.abs(x.attention - y.attention).max()
            for x, y in zip(a, b)
            if x.attention.shape == y.attention.shape
        ]
        report[variant] = {
            "same_translations": f"{sum(same)}/{len(same)}",
            "max_attention_diff": float(max(diffs, default=0.0)),
        }
    return report
