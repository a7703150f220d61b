"""A job's pending shards on Ray Data: a pool of actors (one model copy each, one CPU each) maps shards
to outputs, results stream back in input order and each is written to the job's folder as it arrives.

``run_job`` connects to ``address`` (a running cluster: HOST:PORT of its head, or ray://HOST:PORT) or
starts a local Ray instance, and always disconnects: after Ctrl-C the actors are gone and the finished
shards stay in the folder for ``--resume``. A worker that dies (the machine, the process) is restarted
and its shard retried; an error inside a shard (a bug, bad input) is raised here with its own message.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any

from ..errors import AttnkitError, UsageError
from ..log import log, progress
from .folder import Folder
from .work import FAIL_SHARD, Job, Worker

CONNECT_TIMEOUT_S = 10.0
HANDSHAKE_TIMEOUT_S = 25.0  # with the TCP check: one line within 30 s whatever answers


def check_ray() -> None:
    """Ray is the ``ray`` extra: one line saying how to install it."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        raise UsageError("--engine ray needs Ray: pip install 'attnkit[ray]'")


def probe(address: str) -> None:
    """One line within CONNECT_TIMEOUT_S when nothing listens at ``address`` (Ray itself would retry
    for minutes)."""
    target = address.removeprefix("ray://")
    host, _, port = target.rpartition(":")
    if not host or not port.isdigit():
        raise UsageError(
            f"--address {address}: expected HOST:PORT of the Ray head (its GCS port, 6379 by default) "
            "or ray://HOST:PORT"
        )
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except (OSError, OverflowError, ValueError) as e:
        reason = getattr(e, "strerror", None) or str(e) or type(e).__name__
        raise UsageError(f"--address {address}: no Ray cluster answers there ({reason})") from None
    _handshake(address)


HANDSHAKE = """
import logging, sys, ray
ray.init(address=sys.argv[1], log_to_driver=False, logging_level=logging.ERROR)
print(int(ray.cluster_resources().get("CPU", 0)))
"""


def _handshake(address: str) -> None:
    """Connect once in a child process, bounded in time: something that listens but is not a Ray head
    (or a cluster that wants a token, or Ray Client without its extra) is one line, not a hang or Ray's
    traceback."""
    import subprocess

    try:
        done = subprocess.run(
            [sys.executable, "-c", HANDSHAKE, address],
            capture_output=True,
            text=True,
            timeout=HANDSHAKE_TIMEOUT_S,
            env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"},
        )
    except subprocess.TimeoutExpired:
        raise UsageError(
            f"--address {address}: no Ray cluster answered within {HANDSHAKE_TIMEOUT_S:.0f} s "
            "(is it the head's GCS port, 6379 by default?)"
        ) from None
    if done.returncode == 0:
        return
    text = done.stderr
    if "AuthenticationError" in text or "InvalidAuthToken" in text:
        reason = (
            "the cluster wants its token: set RAY_AUTH_MODE=token and copy ~/.ray/auth_token (docs/scale.md)"
        )
    elif address.startswith("ray://") and "client" in text.lower():
        reason = "ray:// needs Ray Client: pip install 'ray[client]', or give the head's HOST:PORT"
    else:
        last = [line for line in text.splitlines() if line.strip()]
        reason = last[-1].strip()[:200] if last else f"exit {done.returncode}"
    raise UsageError(f"--address {address}: Ray refused the connection ({reason})")


@contextmanager
def session(address: str | None, workers: int | None) -> Iterator[int]:
    """Connected to Ray for the block; yields the number of workers to run."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no report leaves the machine
    os.environ.setdefault("RAY_BACKEND_LOG_LEVEL", "fatal")  # core-worker notes would interleave the output
    if address:
        probe(address)
    import ray

    quiet = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.ERROR}
    with _without_level_note():
        if address:
            quiet.pop("include_dashboard")
            ray.init(address=address, **quiet)  # type: ignore[arg-type]
        else:
            ray.init(num_cpus=workers or os.cpu_count() or 1, **quiet)  # type: ignore[arg-type]
    try:
        yield workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    finally:
        ray.shutdown()


LEVEL_NOTE = "Set ray log level from environment variable RAY_BACKEND_LOG_LEVEL"


@contextmanager
def _without_level_note() -> Iterator[None]:
    """Ray's C++ core writes one note to the process's stderr (file descriptor 2) when it reads
    RAY_BACKEND_LOG_LEVEL, which quiets everything else it would write: that note is dropped here, every
    other line written meanwhile is passed on."""
    import tempfile

    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as caught:
        os.dup2(caught.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            caught.seek(0)
            text = caught.read().decode("utf-8", "replace")
            kept = "".join(line for line in text.splitlines(True) if LEVEL_NOTE not in line)
            if kept:
                sys.stderr.write(kept)
                sys.stderr.flush()


class ShardActor:
    """A Ray Data callable class: one ``Worker`` per actor; a batch is one shard."""

    def __init__(self, task: str, options: dict[str, Any], folder: str) -> None:
        self.worker = Worker(Job(task, options), folder)

    def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        import numpy as np

        outputs, said = [], []
        for shard, items in zip(batch["shard"], batch["items"]):
            with warnings.catch_warnings(record=True) as caught:  # said again by the driver, in order
                warnings.simplefilter("always")
                outputs.append(json.dumps(self.worker(int(shard), json.loads(items)), ensure_ascii=False))
            said.append(json.dumps(list(dict.fromkeys(str(w.message) for w in caught))))
        return {"shard": batch["shard"], "outputs": np.array(outputs, dtype=object), "warnings": said}


def run_job(
    job: Job,
    items: Sequence[Any],
    folder: Folder,
    address: str | None = None,
    workers: int | None = None,
) -> list[Any]:
    """Every item's output in input order: the folder's finished shards, the others computed on Ray."""
    plan = folder.plan
    pending = [k for k in range(plan.n_shards) if k not in folder.done()]
    if pending:
        skipped = plan.n_shards - len(pending)
        if skipped:
            log.info(f"--resume: {skipped} of {plan.n_shards} shards already in {folder.path}")
        start = time.perf_counter()
        try:
            _run(job, items, folder, pending, address, workers)
        except KeyboardInterrupt:  # the CLI's one "interrupted" line says what was kept
            kept = len(folder.done())
            raise KeyboardInterrupt(
                f"{kept} of {plan.n_shards} shards kept in {folder.path} (--resume)"
            ) from None
        done = sum(plan.bounds(k)[1] - plan.bounds(k)[0] for k in pending)
        log.info(f"{done} items in {time.perf_counter() - start:.1f} s on Ray ({len(pending)} shards)")
    return folder.outputs()


def _run(
    job: Job,
    items: Sequence[Any],
    folder: Folder,
    pending: list[int],
    address: str | None,
    workers: int | None,
) -> None:
    # Ray's own notes (a worker died, a task is retried) go to stderr: stdout is the job's output
    with contextlib.redirect_stdout(sys.stderr), session(address, workers) as n_workers:
        import ray.data

        context = ray.data.DataContext.get_current()
        context.execution_options.preserve_order = True  # shards come back in input order
        context.enable_progress_bars = False  # attnkit's own bar below (off with --quiet)
        logging.getLogger("ray.data").setLevel(logging.ERROR)
        rows = []
        for k in pending:
            start, end = folder.plan.bounds(k)
            rows.append({"shard": k, "items": json.dumps(list(items[start:end]), ensure_ascii=False)})
        env = {"OMP_NUM_THREADS": "1"}
        if os.environ.get(FAIL_SHARD) is not None:
            env[FAIL_SHARD] = os.environ[FAIL_SHARD]
        data = ray.data.from_items(rows, override_num_blocks=len(rows)).map_batches(
            ShardActor,  # type: ignore[arg-type]
            batch_size=1,
            concurrency=min(n_workers, len(rows)),
            num_cpus=1,
            num_gpus=1 if str(job.options.get("device", "cpu")).startswith("cuda") else 0,  # --device cuda
            fn_constructor_kwargs={**asdict(job), "folder": str(folder.path.absolute())},
            runtime_env={"env_vars": env},
        )
        try:
            for row in progress(data.iter_rows(), total=len(rows), desc=job.task, unit="shard", minimum=2):
                folder.write(int(row["shard"]), json.loads(row["outputs"]))
                for message in json.loads(row["warnings"]):
                    warnings.warn(message, UserWarning, stacklevel=1)  # as the single process says them
        except AttnkitError:
            raise
        except Exception as e:  # Ray wraps a worker's error: its own message, when it is attnkit's
            cause = _attnkit_cause(e)
            if cause is None:
                raise
            raise cause from None


def _attnkit_cause(error: BaseException) -> AttnkitError | None:
    """The attnkit error (bad input, a refused option) that a Ray error carries, if any."""
    seen: set[int] = set()
    stack: list[Any] = [error]
    while stack:
        e = stack.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, AttnkitError):
            return e
        stack += [getattr(e, "cause", None), e.__cause__, e.__context__]
    return None
