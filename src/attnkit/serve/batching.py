"""Micro-batching: concurrent requests gathered into one model call, run off the event loop.

A request submits its items (sentences, documents) with a key (the model and settings they must share).
While the model thread is busy, requests queue; when it is free, the oldest request and every queued one
with the same key (up to ``max_items`` items) run as one call, and each request gets its own slice of
the results. So a lone request never waits for company, and under load batches grow by themselves
(continuous batching); ``max_wait`` adds an optional wait for more requests before a call. The models'
results do not depend on their batch (a test keeps it so): a batched answer equals the one-by-one answer.
With ``enabled`` False every request runs alone on the same thread: the baseline the load benchmark
compares against.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

Run = Callable[[list[Any], Hashable], list[Any]]


@dataclass
class _Request:
    key: Hashable
    items: list[Any]
    future: asyncio.Future[list[Any]]


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
    ) -> None:
        self.run, self.executor, self.enabled = run, executor, enabled
        self.max_items, self.max_wait = max_items, max_wait
        self.pending: list[_Request] = []
        self.stats = BatchStats()
        self._wake: asyncio.Event | None = None
        self._worker: asyncio.Task[None] | None = None

    async def submit(self, items: list[Any], key: Hashable) -> list[Any]:
        loop = asyncio.get_running_loop()
        if not self.enabled:
            self.stats.add(len(items))
            return await loop.run_in_executor(self.executor, self.run, items, key)
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
                if self.max_wait > 0:
                    deadline = loop.time() + self.max_wait
                    while self._count(self.pending[0].key) < self.max_items and loop.time() < deadline:
                        await asyncio.sleep(min(0.001, max(deadline - loop.time(), 0)))
                await self._run(self._take())

    def _count(self, key: Hashable) -> int:
        return sum(len(r.items) for r in self.pending if r.key == key)

    def _take(self) -> list[_Request]:
        """The oldest request and the next ones with its key, up to ``max_items`` items in all."""
        key, total = self.pending[0].key, 0
        batch: list[_Request] = []
        for request in list(self.pending):
            if request.key == key and (not batch or total + len(request.items) <= self.max_items):
                batch.append(request)
                total += len(request.items)
                self.pending.remove(request)
        return batch

    async def _run(self, batch: list[_Request]) -> None:
        items = [item for request in batch for item in request.items]
        self.stats.add(len(items))
        try:
            results = await asyncio.get_running_loop().run_in_executor(
                self.executor, self.run, items, batch[0].key
            )
        except Exception as e:  # the requests share the failure; the loop keeps serving
            for request in batch:
                if not request.future.done():
                    request.future.set_exception(e)
            return
        start = 0
        for request in batch:
            if not request.future.done():
                request.future.set_result(results[start : start + len(request.items)])
            start += len(request.items)
