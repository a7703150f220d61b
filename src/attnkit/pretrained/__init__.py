"""Shipped models: small checkpoints inside the package, each with its training report."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent
DEFAULTS = {"translator": "enfr-rnn", "classifier": "reviews-han"}


def shipped() -> dict[str, Path]:
    """Names of shipped models -> checkpoint paths."""
    return {p.parent.name: p for p in sorted(ROOT.glob("*/model.pt"))}


def resolve(path_or_name: str | Path | None, kind: str = "translator") -> Path:
    """A checkpoint path, or a shipped model's name; None means the default of ``kind``."""
    name = str(path_or_name) if path_or_name is not None else DEFAULTS[kind]
    models = shipped()
    if name in models:
        return models[name]
    path = Path(name)
    if path.is_file():
        return path
    if path.is_dir() and (path / "best.pt").exists():
        return path / "best.pt"
    valid = ", ".join(models) or "none shipped"
    raise FileNotFoundError(f"no model {name!r}: not a checkpoint file and not a shipped model ({valid})")
