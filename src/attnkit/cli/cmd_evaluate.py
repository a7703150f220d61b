"""``attnkit evaluate --model M --src F --ref F [--beam N] [--json]``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..files import json_text
from .options import add_backend, add_engine, add_rerank, rerank_option


def add_parser(sub: Any, name: str) -> None:
    p = sub.add_parser(name, help="BLEU, chrF, attention entropy, speed and memory on a test set")
    p.add_argument("--model", default=None, help="checkpoint or shipped model name (default: shipped)")
    p.add_argument("--src", required=True, help="source sentences, one per line (plain or .gz)")
    p.add_argument("--ref", required=True, help="reference translations, line-aligned with --src")
    p.add_argument("--beam", type=int, default=5, help="beam size; 1 = greedy (default 5)")
    p.add_argument("--batch-size", type=int, default=64, help="sentences decoded together (default 64)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--int8", action="store_true", help="int8 weights: faster CPU decoding of small batches (see README)"
    )
    p.add_argument("--output", help="write the translations to this file")
    p.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:N, or auto (CUDA when present)")
    add_backend(p)
    add_rerank(p)
    add_engine(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..api import load_translator
    from ..data.parallel import read_lines
    from ..engine.sharded import check_options
    from ..evaluation.report import evaluate_translator
    from ..evaluation.speed import timed
    from ..files import atomic_write_text, refuse_overwrite

    check_options(args)
    for flag, value in (("--beam", args.beam), ("--batch-size", args.batch_size)):
        if value < 1:
            raise UsageError(f"{flag} must be >= 1, got {value}")
    if args.output:
        from ..files import refuse_same_outputs

        refuse_same_outputs({"--output": args.output})  # a folder, or no folder to write in: before any work
        refuse_overwrite(
            args.output, {"--src": args.src, "--ref": args.ref, "--model": args.model}, "--output"
        )
    rerank = rerank_option(args)
    sources, references = read_lines(args.src), read_lines(args.ref)
    if not sources:
        raise UsageError(f"{args.src} has no sentences to evaluate")
    if len(sources) != len(references):
        raise UsageError(f"{args.src} has {len(sources)} lines but {args.ref} has {len(references)}")
    translator, load_seconds = timed(
        lambda: load_translator(
            args.model,
            int8=args.int8,
            device=args.device,
            backend=args.backend,
            rerank=rerank,
            channel_weight=args.channel_weight,
            length_weight=args.length_weight,
        )
    )
    if args.engine == "ray":
        report = _on_ray(args, translator, sources, references, rerank, load_seconds)
    else:
        report = evaluate_translator(
            translator, sources, references, args.beam, args.batch_size, load_seconds
        )
    hyps = report.pop("hypotheses")
    report["data"] = {"src": str(Path(args.src)), "ref": str(Path(args.ref))}
    # what ran: a shipped Transformer runs its int8-only export without --int8
    report["decoding"]["int8"] = bool(args.int8 or getattr(translator, "variant", "") == "int8")
    report["decoding"]["backend"] = translator.backend
    if translator.reranker is not None:
        r = translator.reranker
        report["decoding"]["rerank"] = {
            "channel": r.channel.path,
            "channel_weight": r.channel_weight,
            "length_weight": r.length_weight,
        }
    if args.output:
        atomic_write_text(args.output, "\n".join(hyps) + "\n")
    if args.json:
        print(json_text(report, indent=2, ensure_ascii=False))
    else:
        for key in (
            "bleu",
            "chrf",
            "attention_entropy",
            "sentences_per_second",
            "ms_per_sentence",
            "model_load_seconds",
            "peak_memory_mb",
            "n_sentences",
        ):
            print(f"{key:22s} {report[key]}")
        print(f"{'signature (BLEU)':22s} {report['signature']['bleu']}")
        print(f"{'signature (chrF)':22s} {report['signature']['chrf']}")
    return 0


def _on_ray(
    args: argparse.Namespace,
    translator: Any,
    sources: list[str],
    references: list[str],
    rerank: bool | str | None,
    load_seconds: float,
) -> dict[str, Any]:
    """The report of translations made in shards on Ray: the same hypotheses and scores; speed is the
    whole job's (workers' start included), memory this process's."""
    from ..engine.sharded import run_in_order
    from ..evaluation.report import build_report
    from ..evaluation.speed import timed

    keep = ("model", "int8", "device", "backend", "beam", "batch_size")
    options = {k: getattr(args, k) for k in keep}
    options.update(rerank=rerank, channel_weight=args.channel_weight, length_weight=args.length_weight)
    outputs, seconds = timed(lambda: run_in_order("evaluate", options, sources, translator, args))
    hyps = [out["translation"] for out in outputs]
    total, rows = sum(out["entropy"][0] for out in outputs), sum(out["entropy"][1] for out in outputs)
    entropy = total / rows if rows else 0.0
    return build_report(
        translator, hyps, references, entropy, seconds, load_seconds, args.beam, args.batch_size
    )
