"""``attnkit export``: a checkpoint -> a folder the torch-free runtime (``attnkit.runtime``) runs.

The folder holds ONNX graphs (RNN and Transformer: ``encoder`` and a decoder ``step`` that takes the state
and returns log-probabilities, attention and the new state; HAN: one ``model`` graph), the tokenizer or
the word vocabulary, and ``manifest.json`` (config, vocabularies and target ids, labels, prior
correction, version, how the graphs' inputs and outputs fit together, the SHA-256 of every file). The
export is written to a temporary folder, checked (``onnx.checker``, then the runtime against torch on
probe inputs) and only then moved into place.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from ..checkpoint import load_checkpoint
from ..files import atomic_write_json, sha256
from ..names import resolve as resolve_name
from ..pretrained import resolve
from ..runtime.manifest import FORMAT, FORMAT_VERSION, MANIFEST
from ..tasks import TABLE
from ..version import __version__
from .folders import check_out
from .verify import verify

__all__ = ["export"]


def export(
    path_or_name: str | Path | None,
    out: str | Path,
    int8: bool = False,
    lossy_fp16: bool = False,
    only_int8: bool = False,
) -> dict[str, Any]:
    """Export a checkpoint (path or shipped name) to the folder ``out``; returns the manifest.

    ``int8``: also write int8-weight graphs (variant "int8"). ``only_int8``: keep only those (the fp32
    graphs are written and checked, then dropped: a smaller folder to ship). ``lossy_fp16``: store every
    weight in fp16 even where that rounds it (default: only where it is exact, as for fp16-shipped models)."""
    int8 = int8 or only_int8
    path = resolve(path_or_name, "translation")
    task = load_checkpoint(path).task
    out = Path(out)
    check_out(out, path, MANIFEST)
    tmp = out.with_name(f".{out.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        model: Any
        exporter = resolve_name(TABLE[task].exporter)  # the task x backend table's exporter
        model, manifest = exporter(path, tmp, int8)
        manifest["meta"]["half_weights"] = _store_half(tmp, manifest, lossy_fp16)
        manifest["meta"]["source_checkpoint"] = {"file": path.name, "sha256": sha256(path)}
        _finish(tmp, manifest)
        manifest["meta"]["verification"] = verify(model, tmp, manifest)
        if only_int8:
            _keep_one_variant(tmp, manifest)
        _finish(tmp, manifest)
        _swap(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return manifest


def _store_half(root: Path, manifest: dict[str, Any], lossy: bool) -> int:
    from .onnx_files import check, store_half

    converted = 0
    for roles in manifest["graphs"].values():
        for name in roles.values():
            converted += store_half(root / name, lossy)
            check(root / name)
    return converted


def _keep_one_variant(root: Path, manifest: dict[str, Any]) -> None:
    """For --int8-only (after both variants were verified): remove the fp32 variant and the graph files
    only it used; when int8 quantized nothing (the int8 variant is the fp32 graphs, as for a HAN), keep
    them as "fp32" instead."""
    graphs, checks = manifest["graphs"], manifest["meta"]["verification"]
    drop = "int8" if graphs["int8"] == graphs["fp32"] else "fp32"
    graphs.pop(drop)
    checks.pop(drop, None)
    kept = {name for roles in manifest["graphs"].values() for name in roles.values()}
    for path in root.glob("*.onnx"):
        if path.name not in kept:
            path.unlink()


def _finish(root: Path, manifest: dict[str, Any]) -> None:
    """Checksums of every file but the manifest, then the manifest itself."""
    names = sorted(p.name for p in root.iterdir() if p.is_file() and p.name != MANIFEST)
    manifest.update(format=FORMAT, format_version=FORMAT_VERSION, attnkit_version=__version__)
    manifest["files"] = {name: sha256(root / name) for name in names}
    atomic_write_json(root / MANIFEST, manifest)


def _swap(tmp: Path, out: Path) -> None:
    """Replace ``out`` by the finished ``tmp`` folder; an old export is removed only after the move."""
    old = out.with_name(f".{out.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if out.exists():
        out.rename(old)
    tmp.rename(out)
    shutil.rmtree(old, ignore_errors=True)
