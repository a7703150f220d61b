"""The runtime's thread policy: parallel batches keep their order and use 1-thread sessions."""

from __future__ import annotations

import threading

from attnkit.runtime.sessions import Graph, parallel_map


class _Graph(Graph):
    """A Graph whose sessions are names, to see which one a call would use (no file opened)."""

    def __init__(self, threads: int) -> None:
        self.threads, self.large_rows, self.small, self._lock = threads, 128, "small", threading.Lock()
        self._large = "large"


def test_parallel_map_keeps_order_and_uses_worker_threads():
    graph = _Graph(threads=2)
    out = list(parallel_map(lambda i: (i, threading.current_thread().name, graph.session(500)), range(7), 2))
    assert [i for i, _, _ in out] == list(range(7))
    assert all(name.startswith("attnkit-onnx") for _, name, _ in out)
    assert {session for _, _, session in out} == {"small"}  # parallel calls never take the large one


def test_lone_large_batches_use_every_thread():
    graph = _Graph(threads=2)
    assert graph.session(5) == "small" and graph.session(127) == "small"
    assert graph.session(128) == "large"
    assert _Graph(threads=1).session(1000) == "small"
    assert list(parallel_map(lambda i: graph.session(500), [0], 2)) == ["large"]  # one item: here
