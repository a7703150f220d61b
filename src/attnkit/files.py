"""Atomic writes and checksums, torch-free: a crash or Ctrl-C never leaves half a file."""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any


def write_target(path: str | Path) -> Path:
    """Where an atomic write of ``path`` goes: through a symbolic link to the file it names (the link is
    kept), never over a folder, a device or a pipe (an OSError naming the path), into a folder that
    exists (FileNotFoundError naming it)."""
    given = Path(path)
    target = Path(os.path.realpath(given)) if given.is_symlink() else given
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a folder: give a file name", str(given))
    if target.exists() and not target.is_file():
        not_file = "is not a regular file (a device or a pipe): give a file name"
        raise FileExistsError(errno.EEXIST, not_file, str(given))
    if not target.parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, "its folder does not exist", str(given))
    return target


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write to a temporary name in the same folder, then rename over ``path`` (``write_target``)."""
    given = Path(path)
    path = write_target(given)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError as e:  # name the user's path, not the hidden temporary file
        raise type(e)(e.errno, e.strerror, str(given)) from None
    finally:
        if tmp.exists():
            tmp.unlink()


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(Path(path), text.encode("utf-8"))


def finite(obj: Any) -> Any:
    """``obj`` with every NaN or infinite float replaced by None: JSON has no NaN or Infinity, and a
    reader's parser would refuse Python's extension (``--json`` output, reports)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def json_text(obj: Any, **options: Any) -> str:
    """``json.dumps`` that never writes NaN or Infinity (``finite``)."""
    return json.dumps(finite(obj), allow_nan=False, **options)


def atomic_write_json(path: str | Path, obj: Any) -> None:
    atomic_write_text(path, json_text(obj, indent=2, ensure_ascii=False) + "\n")


def sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def same_file(a: str | Path, b: str | Path) -> bool:
    """Whether two paths name one file (the same path, a link to it, or the same inode)."""
    a, b = Path(a), Path(b)
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def refuse_same_outputs(outputs: dict[str, str | Path | None]) -> None:
    """A UsageError when two output options (option name -> path) name one file: the second write would
    replace the first while both are announced."""
    from .errors import UsageError

    given = [(flag, path) for flag, path in outputs.items() if path is not None and str(path) != "-"]
    for flag, path in given:  # before any work: a write that cannot happen is said at once
        if Path(path).is_dir():
            raise UsageError(f"{flag} {path} is a folder: give a file name")
        if not Path(path).absolute().parent.is_dir():
            raise UsageError(f"{flag} {path}: no folder {Path(path).absolute().parent} to write it in")
    for k, (flag, path) in enumerate(given):
        for other, earlier in given[:k]:
            if same_file(path, earlier):
                raise UsageError(f"{flag} and {other} both name {path}: give each output its own file")


def refuse_overwrite(out: str | Path, inputs: dict[str, str | Path | None], flag: str) -> None:
    """A UsageError when the output path ``out`` (given as ``flag``) is one of the ``inputs``
    (option name -> path): writing it would destroy what is being read."""
    from .errors import UsageError

    for name, path in inputs.items():
        if path is not None and str(path) != "-" and same_file(out, path):
            raise UsageError(
                f"{flag} {out} is also {name}: writing it would replace the input; choose another path"
            )


MAX_TEXT_BYTES = 64 << 20  # a whole-text input (attnkit inspect --file): 64 MB, far past any model's context


def read_text(path: str | Path) -> str:
    """A whole UTF-8 text file (plain or gzip); a missing file, a folder, a file over 64 MB or invalid
    UTF-8 is one line naming the file (and the line)."""
    from .errors import DataError

    path = Path(path)
    try:
        if path.stat().st_size > MAX_TEXT_BYTES:
            raise DataError(f"{path}: over {MAX_TEXT_BYTES >> 20} MB, more than any model's context")
        data = path.read_bytes()
        if data[:2] == b"\x1f\x8b":
            import gzip

            data = gzip.decompress(data)[: MAX_TEXT_BYTES + 1]
    except IsADirectoryError:
        raise DataError(f"{path}: is a folder, not a text file") from None
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except (OSError, EOFError) as exc:
        raise DataError(f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DataError(f"{path}:{line}: invalid UTF-8") from None
