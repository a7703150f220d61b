"""The store of models and datasets, kept outside the wheel and fetched by name (torch-free).

The wheel holds code and ``assets.json``: for every shipped model (``pretrained/NAME``) and dataset
(``datasets/NAME``) the files it consists of, with their sizes and SHA-256. The files themselves live in
one of two places, looked up in this order:

1. the package's own folders, as in a source checkout or an editable install (``make demo`` and
   ``make test`` use these: nothing to fetch, nothing downloaded);
2. the cache, ``$ATTNKIT_HOME`` or ``~/.cache/attnkit``, filled by ``attnkit fetch NAME --from SOURCE``
   (or ``fetch()``), where SOURCE is a folder holding ``pretrained/`` and ``datasets/`` (a clone of the
   repository's ``src/attnkit``) or an http(s) URL of such a folder. Every file is checked against its
   SHA-256 before the asset is moved into place, so the cache never holds half an asset.

``ATTNKIT_SOURCE`` names a default SOURCE.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from .errors import NotFoundError, UsageError
from .files import atomic_write_json, sha256

PACKAGE = Path(__file__).resolve().parent
INDEX = PACKAGE / "assets.json"
KINDS = ("pretrained", "datasets")


def cache_root() -> Path:
    return Path(os.environ.get("ATTNKIT_HOME") or Path.home() / ".cache" / "attnkit")


def index() -> dict[str, dict[str, Any]]:
    """``"pretrained/enfr-rnn" -> {"files": {relative path: {"size", "sha256"}}}`` for every asset."""
    if not INDEX.is_file():
        return {}
    return dict(json.loads(INDEX.read_text(encoding="utf-8"))["assets"])


def local(kind: str, name: str) -> Path | None:
    """The folder of an asset that is present (package first, then cache), or None."""
    for root in (PACKAGE, cache_root()):
        folder = root / kind / name
        if folder.is_dir() and any(folder.iterdir()):
            return folder
    return None


def folder(kind: str, name: str) -> Path:
    """The folder of an asset, or a NotFoundError saying how to fetch it."""
    found = local(kind, name)
    if found is not None:
        return found
    key = f"{kind}/{name}"
    if key not in index():
        valid = ", ".join(sorted(k.split("/", 1)[1] for k in index() if k.startswith(kind)))
        raise NotFoundError(f"unknown {kind} name {name!r}; valid: {valid or 'none'}")
    raise NotFoundError(
        f"{name} is not installed: attnkit fetch {name} --from SOURCE (a clone's src/attnkit folder or "
        "its URL; see attnkit list)"
    )


def names(kind: str) -> list[str]:
    """Every asset of ``kind`` the index knows, installed or not."""
    return sorted(key.split("/", 1)[1] for key in index() if key.startswith(f"{kind}/"))


def fetch(name: str, source: str | None = None) -> Path:
    """Copy asset ``name`` (a model or dataset name) from ``source`` into the cache, verified."""
    source = source or os.environ.get("ATTNKIT_SOURCE")
    matches = [key for key in index() if key.split("/", 1)[1] == name]
    if not matches:
        valid = ", ".join(sorted(k.split("/", 1)[1] for k in index()))
        raise UsageError(f"unknown model or dataset {name!r}; valid: {valid}")
    key = matches[0]
    if source:
        check_source(source)  # a malformed --from is said even when the asset is already here
    present = local(*key.split("/", 1))
    files = index()[key]["files"]
    missing = [] if present is None else [r for r in files if not (present / r).is_file()]
    if present is not None and (not missing or present.is_relative_to(PACKAGE)):
        return present
    if not source:
        if missing:  # a copy fetched before the asset gained files (e.g. a dataset's lexical tables)
            raise UsageError(f"{name}: {present / missing[0]} is missing: give --from SOURCE to fetch it")
        raise UsageError(f"{name}: give --from SOURCE (or set ATTNKIT_SOURCE): where to fetch it from")
    if present is not None:  # complete the copy here, each file verified, then moved in place
        for relative in missing:
            part = (present / relative).with_name(f".{Path(relative).name}.partial")
            try:
                _copy(source, f"{key}/{relative}", part, files[relative]["sha256"])
                part.replace(present / relative)
            finally:
                part.unlink(missing_ok=True)
        return present
    target = cache_root() / key
    tmp = target.with_name(f".{target.name}.partial")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        for relative, meta in files.items():
            _copy(source, f"{key}/{relative}", tmp / relative, meta["sha256"])
        tmp.replace(target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def check_source(source: str) -> None:
    """An http(s) URL that parses, or a folder: one line otherwise, before anything is written."""
    if source.startswith(("http://", "https://")):
        from urllib.parse import urlsplit

        try:
            parts = urlsplit(source)
            parts.port  # noqa: B018 (parsing the port is what raises on a bad one)
        except ValueError as e:
            raise UsageError(f"--from {source}: not a valid URL ({e})") from None
        if not parts.hostname:
            raise UsageError(f"--from {source}: not a valid URL (no host)")
    elif not Path(source).is_dir():
        raise UsageError(f"--from {source}: no such folder (give a clone's src/attnkit folder or its URL)")


def _copy(source: str, relative: str, dest: Path, digest: str) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if source.startswith(("http://", "https://")):
        import urllib.request  # only when fetching from a URL

        url = f"{source.rstrip('/')}/{relative}"
        try:
            with urllib.request.urlopen(url, timeout=60) as answer, dest.open("wb") as out:  # noqa: S310
                shutil.copyfileobj(answer, out)
        except (OSError, ValueError) as e:
            raise UsageError(f"cannot fetch {url}: {e}") from None
    else:
        path = Path(source) / relative
        if not path.is_file():
            raise UsageError(f"--from {source}: no {relative} there (give the folder holding pretrained/)")
        shutil.copyfile(path, dest)
    if sha256(dest) != digest:
        raise UsageError(f"{relative} from {source} does not match its SHA-256 in the index: refused")


def write_index(root: Path = PACKAGE) -> dict[str, Any]:
    """Re-make ``assets.json`` from the asset folders under ``root`` (what ``scripts/ship_model.py`` and
    a test keep in step with the shipped files)."""
    assets: dict[str, Any] = {}
    for kind in KINDS:
        for asset in sorted(p for p in (root / kind).iterdir() if p.is_dir() and p.name != "__pycache__"):
            files = {
                str(f.relative_to(asset)): {"size": f.stat().st_size, "sha256": sha256(f)}
                for f in sorted(asset.rglob("*"))
                if f.is_file() and "__pycache__" not in f.parts
            }
            assets[f"{kind}/{asset.name}"] = {"files": files}
    data = {"format": "attnkit-assets", "format_version": 1, "assets": assets}
    atomic_write_json(root / "assets.json", data)
    return data
