"""A sharded job's folder: its plan (``manifest.json``), one JSON file per finished shard, resume.

A folder belongs to one job: the task, its settings and a digest of its input. ``--resume`` continues
only that job (any difference is named before any work); without ``--resume`` a folder that already
holds anything is refused, so nothing a user has is overwritten.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..files import atomic_write_json, atomic_write_text, json_text
from ..log import log

MANIFEST = "manifest.json"


@dataclass(frozen=True)
class Plan:
    """What a folder's shards are of: ``n_items`` items of ``task`` under ``settings``, cut into shards
    of ``shard_size``; ``digest``: sha256 of the input columns (so another input is never resumed)."""

    task: str
    settings: dict[str, Any]
    digest: str
    n_items: int
    shard_size: int

    @property
    def n_shards(self) -> int:
        return -(-self.n_items // self.shard_size)

    def bounds(self, shard: int) -> tuple[int, int]:
        start = shard * self.shard_size
        return start, min(start + self.shard_size, self.n_items)


def digest(columns: Sequence[Sequence[str]]) -> str:
    """sha256 of the input: every column's lines, in order."""
    h = hashlib.sha256()
    for column in columns:
        for line in column:
            h.update(line.encode("utf-8", "surrogatepass") + b"\n")
        h.update(b"\x00")
    return h.hexdigest()


class Folder:
    """``path``/manifest.json and ``path``/shards/NNNNNN.json (a JSON list: the shard's outputs)."""

    def __init__(self, path: str | Path, plan: Plan, resume: bool = False) -> None:
        self.path, self.plan = Path(path), plan
        self.shards = self.path / "shards"
        if self.path.exists() and not self.path.is_dir():
            raise UsageError(f"--shards {path} is a file: give a folder")
        if resume:
            self._check_resumable()
        elif self.path.is_dir() and any(self.path.iterdir()):
            raise UsageError(
                f"--shards {path} already holds files: give --resume to continue its job, or a new folder"
            )
        try:
            self.shards.mkdir(parents=True, exist_ok=True)
            atomic_write_json(self.path / MANIFEST, asdict(plan))
        except OSError as e:
            raise UsageError(f"--shards {path}: {e.strerror or e}") from None

    def _check_resumable(self) -> None:
        manifest = self.path / MANIFEST
        if not manifest.is_file():
            raise UsageError(f"--resume: {self.path} has no {MANIFEST}: it is not a sharded job's folder")
        try:
            earlier = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            raise UsageError(f"--resume: {manifest} cannot be read ({e})") from None
        now = json.loads(json_text(asdict(self.plan)))
        names = {"task": "the command", "digest": "the input", "n_items": "the number of lines"}
        names.update(shard_size="--shard-size", settings="the options")
        for key in ("task", "digest", "n_items", "shard_size", "settings"):
            if not isinstance(earlier, dict) or earlier.get(key) != now[key]:
                what = names[key]
                if key == "settings" and isinstance(earlier, dict) and isinstance(earlier.get(key), dict):
                    changed = sorted(k for k in now[key] if earlier[key].get(k) != now[key][k])
                    flags = ["--" + k.replace("_", "-") for k in changed or sorted(earlier[key])]
                    what = "the options (" + ", ".join(flags) + ")"
                raise UsageError(
                    f"--resume: {self.path} holds another job ({what} differ): give the same input "
                    "and options, or a new folder"
                )

    def file(self, shard: int) -> Path:
        return self.shards / f"{shard:06d}.json"

    def done(self) -> set[int]:
        """The shards already finished: a file holding a JSON list of as many outputs as the shard has
        items. Any other file there (truncated, edited, not UTF-8) is said and computed again."""
        finished = set()
        for k in range(self.plan.n_shards):
            if not self.file(k).is_file():
                continue
            if self._read(k) is None:
                log.warning(f"--resume: {self.file(k)} is not a finished shard: computed again")
                continue
            finished.add(k)
        return finished

    def _read(self, shard: int) -> list[Any] | None:
        start, end = self.plan.bounds(shard)
        try:
            outputs = json.loads(self.file(shard).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError):
            return None
        return outputs if isinstance(outputs, list) and len(outputs) == end - start else None

    def write(self, shard: int, outputs: list[Any]) -> None:
        start, end = self.plan.bounds(shard)
        if len(outputs) != end - start:
            raise RuntimeError(f"shard {shard}: {len(outputs)} outputs for {end - start} items")
        atomic_write_text(self.file(shard), json_text(outputs, ensure_ascii=False))

    def outputs(self) -> list[Any]:
        """Every item's output, in input order (every shard must be finished)."""
        out: list[Any] = []
        for k in range(self.plan.n_shards):
            outputs = self._read(k)
            if outputs is None:
                raise UsageError(f"{self.file(k)} changed while the job ran: run it again with --resume")
            out.extend(outputs)
        return out
