"""The micro-batcher: one bad request fails alone; a heavy request is served in chunks, round-robin."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest

from attnkit.errors import DataError
from attnkit.serve.batching import MicroBatcher


def _batcher(calls: list[list[str]], max_items: int = 4) -> MicroBatcher:
    def run(items: list[str], key: object) -> list[str]:
        calls.append(list(items))
        if any(item == "bad" for item in items):
            raise DataError("a bad item")
        return [item.upper() for item in items]

    return MicroBatcher(run, ThreadPoolExecutor(max_workers=1), True, max_items)


def test_a_failing_item_fails_its_own_request_only():
    calls: list[list[str]] = []

    async def scenario():
        batcher = _batcher(calls)
        blocker = asyncio.ensure_future(batcher.submit(["x"], "k"))  # keeps the model busy while others queue
        await asyncio.sleep(0)
        good = asyncio.ensure_future(batcher.submit(["a"], "k"))
        bad = asyncio.ensure_future(batcher.submit(["bad"], "k"))
        other = asyncio.ensure_future(batcher.submit(["b"], "k"))
        await blocker
        results = await asyncio.gather(good, bad, other, return_exceptions=True)
        return results

    good, bad, other = asyncio.run(scenario())
    assert good == ["A"] and other == ["B"] and isinstance(bad, DataError)
    assert ["a", "bad", "b"] in calls  # they were batched first, then rerun one by one


def test_a_heavy_request_is_chunked_and_a_light_one_waits_one_chunk_at_most():
    calls: list[list[str]] = []

    async def scenario():
        batcher = _batcher(calls, max_items=4)
        heavy = asyncio.ensure_future(batcher.submit([f"h{i}" for i in range(12)], "k"))
        await asyncio.sleep(0)
        light = asyncio.ensure_future(batcher.submit(["l"], "k"))
        return await heavy, await light

    heavy, light = asyncio.run(scenario())
    assert heavy == [f"H{i}" for i in range(12)] and light == ["L"]
    assert max(len(c) for c in calls) <= 4
    first_light = next(i for i, c in enumerate(calls) if "l" in c)
    last_heavy = max(i for i, c in enumerate(calls) if "h11" in c)
    # the running chunk and the heavy request's next one (queued before it) go first, then the light one
    assert first_light <= 2 and first_light < last_heavy


@pytest.mark.parametrize("enabled", [True, False])
def test_results_keep_request_order(enabled):
    calls: list[list[str]] = []

    async def scenario():
        batcher = _batcher(calls, max_items=3)
        batcher.enabled = enabled
        return await asyncio.gather(
            *(batcher.submit([f"r{r}i{i}" for i in range(r + 1)], "k") for r in range(5))
        )

    answers = asyncio.run(scenario())
    assert answers == [[f"R{r}I{i}" for i in range(r + 1)] for r in range(5)]
