"""Text the CLI reads from stdin, checked as strictly as files are (torch-free)."""

from __future__ import annotations

import sys

from ..errors import DataError


def stdin_lines(skip_blank: bool = False) -> list[str]:
    """Lines of stdin without their newline; bytes that are not UTF-8 (random bytes, Latin-1 text)
    are a DataError naming the line and byte, never text passed on to a model."""
    raw = getattr(sys.stdin, "buffer", None)
    if raw is None:  # a text stream handed in by a caller (tests, notebooks)
        lines = [line.rstrip("\n") for line in sys.stdin]
    else:
        lines = []
        for number, data in enumerate(raw, start=1):
            try:
                lines.append(data.decode("utf-8").rstrip("\r\n"))
            except UnicodeDecodeError as e:
                raise DataError(
                    f"stdin:{number}: not UTF-8 text (byte 0x{data[e.start]:02x} at column {e.start + 1}); "
                    "convert it first, e.g. iconv -f latin1 -t utf-8"
                ) from None
    for number, line in enumerate(lines, start=1):
        if "\x00" in line:
            raise DataError(f"stdin:{number}: holds a NUL byte: not text")
    return [line for line in lines if line.strip()] if skip_blank else lines
