"""Micro-batching: concurrent requests gathered into one model call, run off the event loop.

A request submits its items (sentences, documents) with a key (the model and settings they must share).
While the model thread is busy, requests queue; when it is free, the next request in turn and the
queued ones with the same key (up to ``max_items`` items) run as one call, and each request gets its own
slice of the results. A request larger than ``max_items`` is served in chunks, round-robin with the others:
a heavy request never makes a light one wait for more than one chunk per request ahead of it. When a call
shared by several requests fails, each request is run again alone, so one bad request fails alone.
A lone request never waits for company, and under load batches grow by themselves (continuous
batching); ``max_wait`` adds an optional wait for more requests before a call. The models'
results do not depend on their batch (a test keeps it so): a batched answer equals the one-by-one answer.
With ``enabled`` False every request runs alone on the same thread: the baseline the load benchmark
compares against.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

Run = Callable[[list[Any], Hashable], list[Any]]


@functools.cache
def _libc() -> Any:
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


def trim_memory() -> None:
    """Hand freed heap memory back to the system (glibc's ``malloc_trim``; elsewhere nothing): after a
    large beam, the allocator would otherwise keep the peak for the life of the server."""
    with contextlib.suppress(AttributeError):
        if _libc() is not None:
            _libc().malloc_trim(0)


@dataclass
class _Request:
    key: Hashable
    items: list[Any]
    future: asyncio.Future[list[Any]]
    taken: int = 0  # items handed to model calls so far
    results: list[Any] = field(default_factory=list)


@dataclass
class BatchStats:
    """Model calls made and items they carried (``/api/health`` shows them)."""

    calls: int = 0
    items: int = 0
    largest: int = 0

    def add(self, n: int) -> None:
        self.calls, self.items, self.largest = self.calls + 1, self.items + n, max(self.largest, n)


class MicroBatcher:
    """Gathers ``submit`` calls with equal keys into one ``run(items, key)`` call on ``executor``."""

    def __init__(
        self,
        run: Run,
        executor: ThreadPoolExecutor,
        enabled: bool = True,
        max_items: int = 64,
        max_wait: float = 0.0,
        after: Callable[[], None] | None = None,
    ) -> None:
        """``after``: called on the model thread after each model call (``trim_memory``)."""
        self.run, self.executor, self.enabled = run, executor, enabled
        self.after = after
        self.max_items, self.max_wait = max_items, max_wait
        self.pending: list[_Request] = []
        self.stats = BatchStats()
        self._wake: asyncio.Event | None = None
        self._worker: asyncio.Task[None] | None = None

    async def submit(self, items: list[Any], key: Hashable) -> list[Any]:
        loop = asyncio.get_running_loop()
        if not self.enabled:
            self.stats.add(len(items))
            return await loop.run_in_executor(self.executor, self._model_call, items, key)
        if self._worker is None or self._worker.done():
            self._wake = asyncio.Event()
            self._worker = loop.create_task(self._loop())
        request = _Request(key, items, loop.create_future())
        self.pending.append(request)
        assert self._wake is not None
        self._wake.set()
        return await request.future

    async def _loop(self) -> None:
        assert self._wake is not None
        loop = asyncio.get_running_loop()
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self.pending:
                self.pending = [r for r in self.pending if not r.future.done()]  # clients gone
                if not self.pending:
                    break
                if self.max_wait > 0:
                    deadline = loop.time() + self.max_wait
                    while self._count(self.pending[0].key) < self.max_items and loop.time() < deadline:
                        await asyncio.sleep(min(0.001, max(deadline - loop.time(), 0)))
                await self._run(self._take())

    def _count(self, key: Hashable) -> int:
        return sum(len(r.items) - r.taken for r in self.pending if r.key == key)

    def _take(self) -> list[tuple[_Request, int, int]]:
        """The next chunk: items of the request at the head and of later requests with its key, up to
        ``max_items`` in all, as (request, start, end). Requests with items left go to the back."""
        key, room = self.pending[0].key, self.max_items
        chunk: list[tuple[_Request, int, int]] = []
        for request in list(self.pending):
            if request.key != key or room == 0:
                continue
            start = request.taken
            end = min(len(request.items), start + room)
            chunk.append((request, start, end))
            request.taken, room = end, room - (end - start)
            self.pending.remove(request)
            if end < len(request.items):
                self.pending.append(request)  # its next chunk waits its turn
        return chunk

    async def _call(self, items: list[Any], key: Hashable) -> list[Any]:
        self.stats.add(len(items))
        return await asyncio.get_running_loop().run_in_executor(self.executor, self._model_call, items, key)

    def _model_call(self, items: list[Any], key: Hashable) -> list[Any]:
        try:
            return self.run(items, key)
        finally:
            if self.after is not None:
                self.after()

    async def _run(self, chunk: list[tuple[_Request, int, int]]) -> None:
        items = [item for request, start, end in chunk for item in request.items[start:end]]
        try:
            results = await self._call(items, chunk[0][0].key)
        except Exception as e:
            if len(chunk) == 1:
                self._fail(chunk[0][0], e)
                return
            for part in chunk:  # shared by several requests: find the one that fails, alone
                await self._run([part])
            return
        offset = 0
        for request, start, end in chunk:
            request.results.extend(results[offset : offset + end - start])
            offset += end - start
            if end == len(request.items) and not request.future.done():
                request.future.set_result(request.results)

    def _fail(self, request: _Request, error: Exception) -> None:
        if request in self.pending:
            self.pending.remove(request)
        if not request.future.done():
            request.future.set_exception(error)
