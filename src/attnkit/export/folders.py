"""Where an export may be written: never over a user's files or the checkpoint it reads."""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import UsageError


def check_out(out: Path, checkpoint: Path, marker: str) -> None:
    """An export replaces only an earlier export of its kind (a folder holding ``marker``) or an empty
    folder, and never the folder that holds the checkpoint it reads: one line otherwise."""
    if checkpoint.resolve().is_relative_to(out.resolve()):
        raise UsageError(f"--out {out} holds the checkpoint being exported ({checkpoint}); choose another")
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file; give a folder (new, empty, or an earlier export)")
    if out.is_dir() and any(out.iterdir()) and not (out / marker).is_file():
        raise UsageError(f"{out}: exists and is not an export folder; choose a new or empty folder")


def readable(folder: Path) -> None:
    """Files as readable as any other the user writes (safetensors writes 0600): 0644 less the umask."""
    umask = os.umask(0)
    os.umask(umask)
    for path in folder.iterdir():
        if path.is_file():
            path.chmod(0o666 & ~umask)
