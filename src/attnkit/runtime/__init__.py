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
    """An export folder -> the ONNX class of its manifest's task (``tasks.TABLE``): ``OnnxTranslator``,
    ``OnnxClassifier`` or ``OnnxCaptioner``."""
    from ..names import resolve
    from ..tasks import TABLE

    manifest = read_manifest(path, task)
    cls = resolve(TABLE[manifest.task].backends["onnx"])  # the task x backend table's ONNX class
    return cls(manifest, "int8" if int8 else "fp32", **options)
