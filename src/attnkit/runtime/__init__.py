"""The torch-free runtime: run ``attnkit export`` folders with NumPy, onnxruntime and sentencepiece.

``load_export(path)`` returns an ``OnnxTranslator``, ``OnnxClassifier`` or ``OnnxCaptioner`` (from the
manifest's kind);
both give the same result objects as the torch ``Translator``/``Classifier``. Nothing on this path
imports torch: a test runs it with torch made unimportable.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .manifest import ExportError, Manifest, read_manifest

__all__ = ["ExportError", "Manifest", "load_export", "read_manifest"]


def load_export(path: str | Path, task: str | None = None, int8: bool = False, **options: Any) -> Any:
    """An export folder -> ``OnnxTranslator`` (translation) or ``OnnxClassifier`` (classification)."""
    manifest = read_manifest(path, task)
    variant = "int8" if int8 else "fp32"
    if manifest.task == "captioning":
        from .captioner import OnnxCaptioner

        return OnnxCaptioner(manifest, variant, **options)
    if manifest.task == "translation":
        from .seq2seq import OnnxTranslator

        return OnnxTranslator(manifest, variant, **options)
    from .han import OnnxClassifier

    return OnnxClassifier(manifest, variant, **options)
