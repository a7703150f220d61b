"""``attnkit serve``: the explorer (translate, classify, align) and its JSON API on 127.0.0.1."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..log import log


def add_parser(sub: Any, name: str) -> None:
    p = sub.add_parser(name, help="the attention explorer in the browser, and its JSON API")
    p.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)"
    )
    p.add_argument("--port", type=int, default=8000)
    p.add_argument(
        "--translator", action="append", help="shipped name or path; repeat for several (default: shipped)"
    )
    p.add_argument(
        "--classifier", action="append", help="shipped name or path; repeat for several (default: shipped)"
    )
    p.add_argument("--backend", choices=("auto", "onnx", "torch"), default="auto")
    p.add_argument(
        "--int8",
        action="store_true",
        help="int8 weights for the translators (faster; the shipped Transformers run torch-free so)",
    )
    p.add_argument("--no-batching", action="store_true", help="run each request alone (for comparison)")
    p.add_argument(
        "--max-wait-ms",
        type=float,
        default=0.0,
        help="extra wait for more requests before a batch (default 0)",
    )
    p.add_argument(
        "--max-batch", type=int, default=8, help="sentences or documents per model call (default 8)"
    )
    p.add_argument(
        "--cors", action="append", metavar="ORIGIN", help="allow browser calls from ORIGIN (default: none)"
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import uvicorn

    from ..serve import ModelSet, create_app

    if args.max_batch < 1:
        raise ValueError(f"--max-batch must be >= 1, got {args.max_batch}")
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be in 0..65535, got {args.port}")
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(
            f"warning: --host {args.host} makes the explorer reachable from other machines", file=sys.stderr
        )
    models = ModelSet(
        args.translator or ["enfr-rnn"], args.classifier or ["reviews-han"], args.backend, args.int8
    )
    app = create_app(
        models,
        batching=not args.no_batching,
        cors=args.cors,
        max_wait=args.max_wait_ms / 1000,
        max_batch=args.max_batch,
    )
    names = ", ".join([*models.translators, *models.classifiers])
    print(f"attnkit explorer on http://{args.host}:{args.port}/ ({names}); Ctrl-C stops it", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False)
    log.info("attnkit explorer stopped")
    return 0
