"""Shipped models by name: each a checkpoint, its ONNX export and its training report, found in the
package's own folder (a source checkout) or in the cache that ``attnkit fetch`` fills (``attnkit.store``)."""

from __future__ import annotations

from pathlib import Path

from .. import store
from ..errors import NotFoundError, UsageError
from .records import DEFAULTS, RECORDS, Record, channel_of, record

ROOT = Path(__file__).resolve().parent
# The default translator is the best dev configuration within 30 ms of beam-5 single-sentence latency on 2
# cores with the runtime, reranking included (docs/experiments/defaults.md); the default aligner is the pair
# the Hansards trial set chose. Both, and every shipped model's partners, are in ``records``.

__all__ = ["DEFAULTS", "RECORDS", "Record", "channel_of", "find_export", "record", "resolve", "shipped"]


def shipped() -> dict[str, Path]:
    """Names of the shipped models that are installed here -> checkpoint paths."""
    found = {p.parent.name: p for p in sorted(ROOT.glob("*/model.pt"))}
    for name in store.names("pretrained"):
        if name in found:  # in the package: no need to look in the cache
            continue
        folder = store.local("pretrained", name)
        if folder is not None and (folder / "model.pt").is_file():
            found[name] = folder / "model.pt"
    return dict(sorted(found.items()))


def find_export(path_or_name: str | Path | None, task: str = "translation") -> Path | None:
    """The ONNX export folder of a shipped model (``NAME/onnx``) or an export folder given as a path;
    None when there is none (then the checkpoint runs on torch)."""
    name = str(path_or_name) if path_or_name is not None else DEFAULTS[task]
    models = shipped()
    folder = models[name].parent / "onnx" if name in models else Path(name)
    return folder if (folder / "manifest.json").is_file() else None


def resolve(path_or_name: str | Path | None, task: str = "translation") -> Path:
    """A checkpoint path, or a shipped model's name; None means the default model of ``task``."""
    name = str(path_or_name) if path_or_name is not None else DEFAULTS[task]
    models = shipped()
    if name in models:
        return models[name]
    path = Path(name)
    if path.is_file():
        return path
    if (path / "manifest.json").is_file():
        raise UsageError(f"{path} is an ONNX export: it runs with --backend onnx (or auto), not on torch")
    if path.is_dir() and (path / "best.pt").exists():
        return path / "best.pt"
    if name in store.names("pretrained"):
        store.folder("pretrained", name)  # raises: not installed, with how to fetch it
    valid = ", ".join(models) or "none shipped"
    raise NotFoundError(f"no model {name!r}: not a checkpoint file and not a shipped model ({valid})")
