"""Options several subcommands share (argparse only: importing this stays instant)."""

from __future__ import annotations

import argparse


def add_backend(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--backend",
        choices=("auto", "onnx", "torch"),
        default="auto",
        help="onnx: the model's ONNX export on onnxruntime (no torch); torch: the checkpoint; "
        "auto (default): onnx when the model has an export and --device is cpu",
    )


def add_rerank(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--rerank",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="noisy-channel reranking of the beam's n-best list with the shipped reverse model and the "
        "weights chosen on dev (enfr-rnn, enfr-transformer: fren-rnn; ende-transformer: deen-rnn). "
        "Default: on for the default translator (no --model), off for a named one",
    )
    p.add_argument(
        "--channel-model",
        metavar="MODEL",
        help="rerank with this target->source model instead (implies --rerank; weights below)",
    )
    p.add_argument("--channel-weight", type=float, default=1.0, help="with --channel-model (default 1.0)")
    p.add_argument("--length-weight", type=float, default=0.0, help="with --channel-model (default 0.0)")


def rerank_option(args: argparse.Namespace) -> bool | str | None:
    """What ``load_translator(rerank=...)`` gets from the options of ``add_rerank`` (None: the default)."""
    from ..errors import UsageError

    if args.channel_model:
        if args.rerank is False:
            raise UsageError("--channel-model reranks: it cannot go with --no-rerank")
        return str(args.channel_model)
    if args.channel_weight != 1.0 or args.length_weight != 0.0:
        raise UsageError(
            "--channel-weight and --length-weight go with --channel-model (--rerank uses the shipped weights)"
        )
    if args.rerank and args.beam < 2:
        raise UsageError("--rerank reranks the beam's n-best list: it needs --beam >= 2")
    return args.rerank


def add_engine(p: argparse.ArgumentParser) -> None:
    """``--engine ray`` and its options (``attnkit.engine``)."""
    p.add_argument(
        "--engine",
        choices=("local", "ray"),
        default="local",
        help="local: this process (default); ray: shards on Ray Data workers, one model copy each "
        "(pip install 'attnkit[ray]'; docs/scale.md). Output identical to local",
    )
    p.add_argument(
        "--address",
        help="--engine ray: the Ray cluster's head, HOST:PORT or ray://HOST:PORT (default: a local Ray)",
    )
    p.add_argument("--workers", type=int, help="--engine ray: workers (default: every CPU of the cluster)")
    p.add_argument(
        "--shard-size",
        type=int,
        default=None,
        help="--engine ray: items per shard (default 512; rounded up to whole batches)",
    )
    p.add_argument(
        "--shards",
        metavar="DIR",
        help="--engine ray: keep finished shards in this new folder (default: a temporary one)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="--engine ray: continue the job in --shards DIR, skipping its finished shards",
    )
