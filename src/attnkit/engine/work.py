"""What one worker does with one shard: load the model(s) once (``load``), then turn each shard's items
into the outputs one process would have made of them, item by item (``Worker.__call__``). Ray-free: a
Ray actor wraps a ``Worker``, and so can a test or a plain loop.

Items and outputs are JSON: ``translate`` turns a source line into the line ``attnkit translate`` prints
(the translation, or its ``--json`` object); ``evaluate`` into the translation and its attention rows'
entropy (sum, count: the corpus mean is taken by the driver); ``align`` a (source, target) pair into its
links and, on request, its alignment probabilities (target words x source words).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

TASKS = ("translate", "evaluate", "align")
Shard = Callable[[Sequence[Any]], list[Any]]


@dataclass(frozen=True)
class Job:
    """A task and the options its worker loads and runs with (JSON values only: the job crosses
    processes, and its options are the resume check's settings)."""

    task: str
    options: dict[str, Any] = field(default_factory=dict)


def _translator(options: dict[str, Any]) -> Any:
    from ..api import load_translator

    keep = ("int8", "device", "backend", "rerank", "channel_weight", "length_weight")
    return load_translator(options.get("model"), **{k: options[k] for k in keep if k in options})


def _translate(options: dict[str, Any]) -> Shard:
    from ..files import json_text

    translator = _translator(options)
    method = options.get("attention_map", "attention")

    def run(lines: Sequence[Any]) -> list[Any]:
        results = translator.translate(
            list(lines), beam=options["beam"], batch_size=options["batch_size"], n_best=options["n_best"]
        )
        if method != "attention":
            from ..explain.translator_maps import with_attention_map

            results = with_attention_map(translator, results, method)
        if options.get("json"):
            return [json_text(r.to_json(), ensure_ascii=False) for r in results]
        return [r.translation for r in results]

    return run


def _evaluate(options: dict[str, Any]) -> Shard:
    translator = _translator(options)

    def run(lines: Sequence[Any]) -> list[Any]:
        results = translator.translate(list(lines), beam=options["beam"], batch_size=options["batch_size"])
        return [{"translation": r.translation, "entropy": row_entropy(r.attention)} for r in results]

    return run


def row_entropy(attention: np.ndarray) -> list[float]:
    """(sum, count) of the entropies (nats) of one translation's non-zero attention rows, as
    ``evaluation.report.mean_entropy`` counts them."""
    from ..evaluation.report import row_entropies

    if not attention.size:
        return [0.0, 0]
    rows = row_entropies(attention)
    return [float(rows.sum()), int(rows.size)]


def _align(options: dict[str, Any]) -> Shard:
    from ..aligning import AlignSettings, load_aligners, run

    settings = AlignSettings(**options["settings"])
    forward, reverse = load_aligners(
        settings, options.get("backend", "auto"), options.get("device", "cpu"), options.get("int8", False)
    )
    keys = ("heads", "layer", "shift", "threshold", "null_threshold")
    extra = {k: options[k] for k in keys if k in options}

    def work(pairs: Sequence[Any]) -> list[Any]:
        sources, targets = [p[0] for p in pairs], [p[1] for p in pairs]
        report = run(settings, forward, reverse, sources, targets, **extra)
        out = []
        for i, found in enumerate(report.links):
            item: dict[str, Any] = {"links": [list(link) for link in sorted(found)]}
            if options.get("probabilities") and report.probabilities is not None:
                item["probabilities"] = np.asarray(report.probabilities[i], dtype=np.float64).tolist()
            out.append(item)
        return out

    return work


LOADERS: dict[str, Callable[[dict[str, Any]], Shard]] = {
    "translate": _translate,
    "evaluate": _evaluate,
    "align": _align,
}


class Worker:
    """One worker's model(s), loaded once; called with (shard index, items) -> outputs."""

    def __init__(self, job: Job, folder: str | None = None, threads: int = 1) -> None:
        try:
            import torch

            torch.set_num_threads(threads)  # one core per worker: workers share the machine
        except ImportError:
            pass
        self.folder = folder
        self.run = LOADERS[job.task](job.options)

    def __call__(self, shard: int, items: Sequence[Any]) -> list[Any]:
        fail_once(shard, self.folder)
        return self.run(items)


FAIL_SHARD = "ATTNKIT_ENGINE_FAIL_SHARD"  # fault injection for the retry test: a worker dies on shard N


def fail_once(shard: int, folder: str | None) -> None:
    """With ``ATTNKIT_ENGINE_FAIL_SHARD=N``: the first worker to reach shard N exits on the spot (as a
    killed machine would), leaving a marker in the job's folder so its retry runs normally."""
    wanted = os.environ.get(FAIL_SHARD)
    if folder is None or wanted is None or wanted != str(shard):
        return
    marker = os.path.join(folder, f".failed-{shard}")
    if not os.path.exists(marker):
        open(marker, "w").close()  # noqa: SIM115
        os._exit(1)
