"""Atomic checkpoints: written to a temporary file and renamed, so a crash never leaves half a file.

A checkpoint alone can translate: it holds the weights, the resolved config, the tokenizer and
the attnkit version, plus optimizer, scheduler, RNG states and data position for ``--resume``.
"""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path
from typing import Any

import numpy as np
import torch

_STEP = re.compile(r"step-(\d+)\.pt$")


def atomic_write_bytes(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(Path(path), text.encode("utf-8"))


def atomic_write_json(path: str | Path, obj: Any) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def atomic_torch_save(obj: Any, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        torch.save(obj, tmp)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def rng_state() -> dict[str, Any]:
    return {"torch": torch.get_rng_state(), "python": random.getstate(), "numpy": np.random.get_state()}


def set_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])


def step_checkpoints(out_dir: Path) -> list[Path]:
    """Checkpoints ``step-N.pt`` in ``out_dir``, oldest first."""
    found = [(int(m.group(1)), p) for p in out_dir.glob("step-*.pt") if (m := _STEP.search(p.name))]
    return [p for _, p in sorted(found)]


def save_checkpoint(out_dir: Path, payload: dict[str, Any], keep_last: int, is_best: bool) -> Path:
    """Write ``step-N.pt`` (and ``best.pt`` when best) atomically; keep the last ``keep_last``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"step-{payload['step']}.pt"
    atomic_torch_save(payload, path)
    if is_best:
        tmp = out_dir / f".best.pt.link{os.getpid()}"
        if tmp.exists():
            tmp.unlink()
        os.link(path, tmp)
        os.replace(tmp, out_dir / "best.pt")
    for old in step_checkpoints(out_dir)[: -max(keep_last, 1)]:
        old.unlink()
    return path


def latest_checkpoint(out_dir: Path) -> Path | None:
    found = step_checkpoints(out_dir)
    return found[-1] if found else None


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"checkpoint {path} does not exist")
    result: dict[str, Any] = torch.load(path, map_location="cpu", weights_only=False)
    return result
