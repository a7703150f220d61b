"""After writing an export: run it with the runtime and compare with the torch model it came from.

An export that does not agree within ``TOLERANCES`` is refused (``ExportError``): nothing is installed.
fp32 graphs compute what torch computes, so they must give the same tokens (labels) and attention
(probabilities) within float rounding; int8 graphs are lossy by design, so they may change one probe
translation in three, and their attention (probabilities) may move by up to 0.05.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ExportError
from ..runtime import load_export

# variant -> (probe translations that must be the same, largest attention or probability difference)
TOLERANCES = {"fp32": (1.0, 1e-3), "int8": (2 / 3, 0.05)}

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
        if manifest["kind"] == "captioner":
            report[variant] = _verify_captioner(model, onnx, variant)
            continue
        if manifest["kind"] == "han":
            a, b = model.classify(PROBE_REVIEWS), onnx.classify(PROBE_REVIEWS)
            prob = max(
                abs(x.probabilities[c] - y.probabilities[c]) for x, y in zip(a, b) for c in x.probabilities
            )
            same = [x.label == y.label for x, y in zip(a, b)]
            report[variant] = {
                "same_labels": f"{sum(same)}/{len(same)}",
                "max_probability_diff": float(prob),
            }
            judge(variant, same, float(prob), "labels", "probability")
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
        judge(variant, same, float(max(diffs, default=0.0)), "translations", "attention")
    return report


def judge(variant: str, same: list[bool], diff: float, what: str, values: str) -> None:
    """Refuse a variant whose agreement with torch is outside ``TOLERANCES``."""
    share, tolerance = TOLERANCES.get(variant, TOLERANCES["int8"])
    if sum(same) < share * len(same) - 1e-9 or not diff <= tolerance:
        raise ExportError(
            f"the {variant} export disagrees with the torch model: {sum(same)}/{len(same)} probe {what} the "
            f"same (needs {share:.0%}), largest {values} difference {diff:.3g} (tolerance {tolerance:g}); "
            "nothing was installed"
        )


def _verify_captioner(model: Any, onnx: Any, variant: str) -> dict[str, Any]:
    """Probe images: digit strings drawn with a fixed seed (random pixels when scikit-learn is absent)."""
    rng = np.random.default_rng(0)
    images = rng.random((3, model.channels, model.height, model.width)).astype(np.float32)
    try:
        from ..data.images import fit_array
        from ..datasets.digits import digit_strings

        images = np.stack(
            [
                fit_array(s.image, model.channels, model.height, model.width)
                for s in digit_strings("dev", 3, seed=99)
            ]
        )
    except Exception:  # noqa: BLE001 (a probe of random pixels still compares the two backends)
        pass
    a, b = model.caption_arrays(images, beam_size=3), onnx.caption_arrays(images, beam_size=3)
    same = [x.caption == y.caption for x, y in zip(a, b)]
    diff = max(
        (
            float(np.abs(x.attention - y.attention).max(initial=0.0))
            for x, y in zip(a, b)
            if x.attention.shape == y.attention.shape
        ),
        default=0.0,
    )
    judge(variant, same, diff, "captions", "attention")
    return {"same_captions": f"{sum(same)}/{len(same)}", "max_attention_diff": diff}
