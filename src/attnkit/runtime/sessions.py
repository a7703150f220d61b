"""onnxruntime sessions for an export's graphs: CPU, errors that name the file, and a thread policy.

Measured on 2 cores (enfr-rnn decoder step, 1 vs 2 intra-op threads): a second thread does not pay for
small batches (int8, 10 rows: 0.37 vs 0.36 ms; 20 rows: 0.53 vs 1.03) and pays from about 100 rows
(fp32, 320 rows: 14.2 vs 7.6 ms). Several batches in parallel threads, one intra-op thread each, beat
both: the search's NumPy work of one batch overlaps the graph of another (828 vs 531 beam-5
sentences/s, int8). So each graph has a 1-thread session, which parallel callers share (onnxruntime's
``run`` is thread-safe and releases the GIL), and a many-thread one, opened on first need, for a lone
large batch.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from .manifest import ExportError, Manifest

T = TypeVar("T")
R = TypeVar("R")
LARGE_ROWS = 128  # batch rows from which a lone call uses every thread (the measurement above)
_local = threading.local()


def threads() -> int:
    """Intra-op threads: ``OMP_NUM_THREADS`` when set (as torch reads it), else the cores of this machine."""
    value = os.environ.get("OMP_NUM_THREADS", "")
    return int(value) if value.isascii() and value.isdigit() and int(value) > 0 else (os.cpu_count() or 1)


def open_session(path: Path, intra_threads: int | None = None, digest: str | None = None) -> Any:
    """An ``onnxruntime.InferenceSession`` on the CPU, all graph optimizations on. With the graph's
    verified SHA-256 ``digest``, its optimized form is kept in ``runtime.cache`` and read back from there
    (optimizations off: already done) on later starts."""
    import onnxruntime as ort

    from . import cache

    options = ort.SessionOptions()
    options.intra_op_num_threads = intra_threads or threads()
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    kept = cache.optimized_graph(digest) if digest else None
    source, temporary = path, None
    if kept is not None and kept.is_file():
        source = kept
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    elif kept is not None:
        temporary = cache.save_optimized(options, kept)
    try:
        session = ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
    except Exception as e:  # onnxruntime raises its own exception types for unreadable graphs
        if source != path:  # a damaged cache entry: the graph itself, optimized afresh
            kept.unlink(missing_ok=True)  # type: ignore[union-attr]
            return open_session(path, intra_threads)
        if temporary is not None:  # saving the optimized graph failed (a full disk?): run without the cache
            temporary.unlink(missing_ok=True)
            return open_session(path, intra_threads)
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ExportError(f"{path}: onnxruntime cannot load this graph ({first[:200]})") from None
    if temporary is not None and temporary.is_file():
        with contextlib.suppress(OSError):
            os.replace(temporary, kept)  # type: ignore[arg-type]
    return session


class Graph:
    """One graph of an export: ``run(names, feeds)`` as an onnxruntime session's, on a 1-thread session
    for batches under ``large_rows`` rows (the first axis of the feeds) and for calls made inside
    ``parallel_map``, else on a session with ``intra_threads`` threads (opened on first use)."""

    def __init__(
        self,
        path: Path,
        intra_threads: int | None = None,
        large_rows: int = LARGE_ROWS,
        digest: str | None = None,
    ) -> None:
        self.path, self.threads, self.large_rows, self.digest = (
            path,
            intra_threads or threads(),
            large_rows,
            digest,
        )
        self.small = open_session(path, 1, digest)
        self._large: Any = None
        self._lock = threading.Lock()

    def session(self, rows: int) -> Any:
        if self.threads <= 1 or rows < self.large_rows or getattr(_local, "parallel", False):
            return self.small
        with self._lock:
            if self._large is None:
                self._large = open_session(self.path, self.threads, self.digest)
        return self._large

    def run(
        self, names: list[str] | None, feeds: dict[str, np.ndarray], rows: int | None = None
    ) -> list[np.ndarray]:
        """``rows``: the batch size, when the caller knows it (else the feeds' largest first axis)."""
        if rows is None:
            rows = max((v.shape[0] for v in feeds.values() if v.ndim), default=0)
        return self.session(rows).run(names, feeds)  # type: ignore[no-any-return]


def sessions(
    manifest: Manifest, variant: str, intra_threads: int | None = None, large_rows: int = LARGE_ROWS
) -> dict[str, Graph]:
    """role -> graph for one variant ("fp32" or "int8") of an export."""
    if variant not in manifest.graphs:
        manifest.graph(variant, "")  # raises, naming the variants there are
    return {
        # a verified checksum names the optimized graph kept in ``runtime.cache``; an unverified one cannot
        role: Graph(
            manifest.file(name),
            intra_threads,
            large_rows,
            manifest.files[name] if manifest.verified else None,
        )
        for role, name in manifest.graphs[variant].items()
    }


@contextmanager
def _one_thread_each() -> Iterator[None]:
    _local.parallel = True
    try:
        yield
    finally:
        _local.parallel = False


def parallel_map(fn: Callable[[T], R], items: Iterable[T], workers: int | None = None) -> Iterator[R]:
    """``map(fn, items)`` in order, over ``workers`` threads (default ``threads()``) whose graph runs use
    1-thread sessions; a single item, or one worker, runs here with the usual thread policy."""
    items = list(items)
    workers = min(workers or threads(), len(items))
    if workers <= 1:
        yield from map(fn, items)
        return

    def call(item: T) -> R:
        with _one_thread_each():
            return fn(item)

    with ThreadPoolExecutor(workers, thread_name_prefix="attnkit-onnx") as pool:
        yield from pool.map(call, items)
