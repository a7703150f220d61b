"""An export's ``manifest.json``: what each file is, how the graphs fit together, and their checksums.

Reading it checks the format, the kind, every field the runtime needs and the SHA-256 of every file, so a
missing, truncated or swapped file is caught before onnxruntime sees it, with one line naming the file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ExportError
from ..names import EXPORT_KINDS
from . import cache

FORMAT = "attnkit-export"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"


@dataclass
class Manifest:
    """A parsed manifest. ``graphs``: variant ("fp32", "int8") -> role ("encoder", "step", "model") -> file
    name."""

    root: Path
    kind: str
    task: str
    graphs: dict[str, dict[str, str]]
    files: dict[str, str]
    io: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    verified: bool = False  # every file's SHA-256 was checked against ``files``

    def file(self, name: str) -> Path:
        return self.root / name

    def graph(self, variant: str, role: str) -> Path:
        if variant not in self.graphs:
            valid = ", ".join(sorted(self.graphs))
            only = self.graphs.keys() == {"int8"}
            hint = "; load it with --int8 (in Python: int8=True), or export again without --int8-only"
            hint = hint if only else ""
            raise ExportError(f"{self.root}: no {variant} graphs in this export (it has: {valid}){hint}")
        return self.file(self.graphs[variant][role])


def _field(data: dict[str, Any], name: str, kind: type, where: Path) -> Any:
    if name not in data:
        raise ExportError(f"{where}: field {name!r} is missing")
    if not isinstance(data[name], kind):
        raise ExportError(
            f"{where}: field {name!r} must be a {kind.__name__}, got {type(data[name]).__name__}"
        )
    return data[name]


def read_manifest(root: str | Path, task: str | None = None, verify: bool = True) -> Manifest:
    """Parse and check ``root/manifest.json``; ``task``: the task the caller needs (translation or
    classification); ``verify``: check every file's SHA-256 against the manifest."""
    root = Path(root)
    where = root / MANIFEST
    if not where.is_file():
        raise ExportError(
            f"{where}: no such file (an export folder holds manifest.json; see `attnkit export`)"
        )
    try:
        data = json.loads(where.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ExportError(f"{where}: not valid JSON ({e})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ExportError(f"{where}: not an attnkit export manifest (format must be {FORMAT!r})")
    version = data.get("format_version")
    if version != FORMAT_VERSION:
        raise ExportError(f"{where}: format_version {version!r}; this attnkit reads {FORMAT_VERSION}")
    kind = _field(data, "kind", str, where)
    if kind not in EXPORT_KINDS:
        raise ExportError(f"{where}: field 'kind' is {kind!r}; valid: {', '.join(EXPORT_KINDS)}")
    if task is not None and EXPORT_KINDS[kind] != task:
        raise ExportError(f"{root} is a {EXPORT_KINDS[kind]} model, not a {task} model ({kind} export)")
    files = _field(data, "files", dict, where)
    graphs = _field(data, "graphs", dict, where)
    for variant, roles in graphs.items():
        for role, name in roles.items():
            if name not in files:
                raise ExportError(f"{where}: graph {variant}/{role} file {name!r} has no checksum in 'files'")
    for name, digest in files.items():
        path = root / name
        if Path(name).name != name:
            raise ExportError(f"{where}: file names must be plain names inside the export, got {name!r}")
        if not path.is_file():
            raise ExportError(f"{path}: missing (listed in {MANIFEST})")
        if verify and cache.checksum(path) != digest:
            raise ExportError(f"{path}: checksum does not match {MANIFEST} (corrupt or replaced file)")
    io = _field(data, "io", dict, where)
    meta = _field(data, "meta", dict, where)
    return Manifest(root, kind, EXPORT_KINDS[kind], graphs, files, io, meta, verified=verify)
