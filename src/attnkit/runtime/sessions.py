"""onnxruntime sessions for an export's graphs: CPU, a fixed thread count, errors that name the file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .manifest import ExportError, Manifest


def threads() -> int:
    """Intra-op threads: ``OMP_NUM_THREADS`` when set (as torch reads it), else the cores of this machine."""
    value = os.environ.get("OMP_NUM_THREADS", "")
    return int(value) if value.isdigit() and int(value) > 0 else (os.cpu_count() or 1)


def open_session(path: Path, intra_threads: int | None = None) -> Any:
    """An ``onnxruntime.InferenceSession`` on the CPU, all graph optimizations on."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = intra_threads or threads()
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    try:
        return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises its own exception types for unreadable graphs
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ExportError(f"{path}: onnxruntime cannot load this graph ({first[:200]})") from None


def sessions(manifest: Manifest, variant: str, intra_threads: int | None = None) -> dict[str, Any]:
    """role -> session for one variant ("fp32" or "int8") of an export."""
    if variant not in manifest.graphs:
        manifest.graph(variant, "")  # raises, naming the variants there are
    return {
        role: open_session(manifest.file(name), intra_threads)
        for role, name in manifest.graphs[variant].items()
    }
