"""``run_sharded``: what a command calls for ``--engine ray`` (the folder, the plan, the run)."""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from typing import Any

from ..errors import UsageError
from .folder import Folder, Plan, digest
from .work import Job

SHARD_SIZE = 512  # items per shard by default


def check_options(args: argparse.Namespace) -> None:
    """The engine options make sense together (before any work)."""
    if args.engine != "ray":
        for flag in ("address", "shards", "workers", "shard_size"):
            if getattr(args, flag) is not None:
                raise UsageError(f"--{flag.replace('_', '-')} goes with --engine ray")
        if args.resume:
            raise UsageError("--resume continues a sharded job: it goes with --engine ray --shards DIR")
        return
    for flag in ("workers", "shard_size"):
        value = getattr(args, flag)
        if value is not None and value < 1:
            raise UsageError(f"--{flag.replace('_', '-')} must be >= 1, got {value}")
    if args.address is not None and not args.address.strip():
        raise UsageError(
            "--address is empty: give HOST:PORT of the Ray head, or leave it out for a local Ray"
        )
    args.shard_size = args.shard_size or SHARD_SIZE
    if args.resume and args.shards is None:
        raise UsageError("--resume continues the job kept in --shards DIR: give that folder")
    from .ray_jobs import check_ray

    check_ray()


def run_sharded(
    task: str, options: dict[str, Any], items: Sequence[Any], args: argparse.Namespace
) -> list[Any]:
    """Every item's output, in input order, computed on Ray in shards of ``--shard-size`` (kept in
    ``--shards DIR`` when given, else in a temporary folder)."""
    from ..files import json_text
    from .ray_jobs import run_job

    columns = [[json_text(item, ensure_ascii=False) for item in items]]
    plan = Plan(task, options, digest(columns), len(items), args.shard_size)
    job = Job(task, options)
    if args.shards is None:
        with tempfile.TemporaryDirectory(prefix="attnkit-shards-") as tmp:
            return run_job(job, items, Folder(tmp, plan), args.address, args.workers)
    return run_job(job, items, Folder(args.shards, plan, args.resume), args.address, args.workers)


def run_in_order(
    task: str, options: dict[str, Any], lines: Sequence[str], translator: Any, args: argparse.Namespace
) -> list[Any]:
    """``run_sharded`` for translation: the lines go out in ``translator.decode_order`` and shards hold
    whole batches (``--shard-size`` rounded up to a multiple of ``--batch-size``), so each batch, and
    every float of the output, is what one process makes; outputs come back in input order."""
    order = translator.decode_order(lines)
    batch = options["batch_size"]
    args.shard_size = -(-args.shard_size // batch) * batch
    outputs = run_sharded(task, options, [lines[i] for i in order], args)
    back: list[Any] = [None] * len(lines)
    for i, out in zip(order, outputs):
        back[i] = out
    return back
