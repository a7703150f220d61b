"""Shipped models: small checkpoints inside the package, each with its training report."""

from __future__ import annotations

from pathlib import Path

from ..errors import NotFoundError, UsageError

ROOT = Path(__file__).resolve().parent
DEFAULTS = {"translator": "enfr-rnn", "classifier": "reviews-han"}


def shipped() -> dict[str, Path]:
    """Names of shipped models -> checkpoint paths."""
    return {p.parent.name: p for p in sorted(ROOT.glob("*/model.pt"))}


def find_export(path_or_name: str | Path | None, kind: str = "translator") -> Path | None:
    """The ONNX export folder of a shipped model (``NAME/onnx``) or an export folder given as a path;
    None when there is none (then the checkpoint runs on torch)."""
    name = str(path_or_name) if path_or_name is not None else DEFAULTS[kind]
    folder = ROOT / name / "onnx" if (ROOT / name / "model.pt").is_file() else Path(name)
    return folder if (folder / "manifest.json").is_file() else None


def resolve(path_or_name: str | Path | None, kind: str = "translator") -> Path:
    """A checkpoint path, or a shipped model's name; None means the default of ``kind``."""
    name = str(path_or_name) if path_or_name is not None else DEFAULTS[kind]
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
    valid = ", ".join(models) or "none shipped"
    raise NotFoundError(f"no model {name!r}: not a checkpoint file and not a shipped model ({valid})")
