"""Timing and memory measured, not typed in."""

from __future__ import annotations

import resource
import sys
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far, in MB (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def timed(fn: Callable[[], T]) -> tuple[T, float]:
    """Run ``fn`` and return (result, seconds)."""
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start
