"""Parallel text: a TSV (``src<TAB>tgt``, extra columns ignored) or two aligned files, plain or .gz.

Every malformed line stops reading with a DataError naming the file and the line number, unless
``skip_bad_lines`` is set, in which case bad lines are counted and reported in one warning.
"""

from __future__ import annotations

import gzip
import unicodedata
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import IO, cast

from ..errors import DataError

# French typography puts no-break spaces before ; : ! ? and inside guillemets.
_SPACES = {"\u00a0": " ", "\u202f": " ", "\u2007": " "}
_SPACE_TABLE = str.maketrans(_SPACES)


def normalize(text: str) -> str:
    """Unicode NFC, no-break spaces to plain spaces, surrounding whitespace stripped."""
    return unicodedata.normalize("NFC", text).translate(_SPACE_TABLE).strip()


def open_text(path: str | Path) -> IO[bytes]:
    """Open a plain or gzip-compressed file for reading bytes (decoding is checked per line)."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"{path}: no such file")
    if path.suffix == ".gz":
        return cast(IO[bytes], gzip.open(path, "rb"))  # noqa: SIM115 (the caller closes it)
    return path.open("rb")


def _lines(path: str | Path) -> Iterator[tuple[int, str | None]]:
    """Yield (line number, text or None when the line is not valid UTF-8)."""
    with open_text(path) as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                yield number, raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError:
                yield number, None


class _Problems:
    def __init__(self, skip: bool) -> None:
        self.skip, self.count, self.first = skip, 0, ""

    def report(self, where: str, what: str) -> None:
        if not self.skip:
            raise DataError(f"{where}: {what}")
        self.count += 1
        self.first = self.first or f"{where}: {what}"

    def warn(self) -> None:
        if self.count:
            warnings.warn(f"skipped {self.count} bad lines (first: {self.first})", stacklevel=3)


def read_tsv(path: str | Path, skip_bad_lines: bool = False) -> tuple[list[str], list[str]]:
    """Read ``src<TAB>tgt[<TAB>...]`` lines. Returns (sources, targets), normalized."""
    problems, src, tgt = _Problems(skip_bad_lines), [], []
    for number, line in _lines(path):
        where = f"{path}:{number}"
        if line is None:
            problems.report(where, "invalid UTF-8")
            continue
        cols = line.split("\t")
        if len(cols) < 2:
            problems.report(where, "expected 'source<TAB>target', found no tab")
            continue
        s, t = normalize(cols[0]), normalize(cols[1])
        if not s or not t:
            problems.report(where, f"empty {'source' if not s else 'target'} side")
            continue
        src.append(s)
        tgt.append(t)
    problems.warn()
    return src, tgt


def read_lines(path: str | Path, allow_empty: bool = True) -> list[str]:
    """Read one sentence per line, normalized; invalid UTF-8 is a DataError naming file and line."""
    out = []
    for number, line in _lines(path):
        if line is None:
            raise DataError(f"{path}:{number}: invalid UTF-8")
        text = normalize(line)
        if not text and not allow_empty:
            raise DataError(f"{path}:{number}: empty line")
        out.append(text)
    return out


def read_aligned(
    src_path: str | Path, tgt_path: str | Path, skip_bad_lines: bool = False
) -> tuple[list[str], list[str]]:
    """Read two line-aligned files. Files of different lengths are an error naming both."""
    problems, src, tgt = _Problems(skip_bad_lines), [], []
    left, right = list(_lines(src_path)), list(_lines(tgt_path))
    if len(left) != len(right):
        raise DataError(
            f"{src_path} has {len(left)} lines but {tgt_path} has {len(right)}: aligned files must match"
        )
    for (number, s), (_, t) in zip(left, right):
        for text, path in ((s, src_path), (t, tgt_path)):
            if text is None:
                problems.report(f"{path}:{number}", "invalid UTF-8")
        if s is None or t is None:
            continue
        s, t = normalize(s), normalize(t)
        if not s or not t:
            bad = src_path if not s else tgt_path
            problems.report(f"{bad}:{number}", "empty line in aligned parallel data")
            continue
        src.append(s)
        tgt.append(t)
    problems.warn()
    return src, tgt


def read_parallel(
    src: str | Path, tgt: str | Path | None = None, skip_bad_lines: bool = False
) -> tuple[list[str], list[str]]:
    """A TSV when ``tgt`` is None, else two aligned files."""
    if tgt is None:
        return read_tsv(src, skip_bad_lines)
    return read_aligned(src, tgt, skip_bad_lines)
