"""``attnkit serve``: the explorer (translate, classify, align) and its JSON API on 127.0.0.1."""

from __future__ import annotations

import argparse
import contextlib
import socket
from typing import Any

from ..errors import UsageError
from ..log import log
from .options import add_backend


def add_parser(sub: Any, name: str) -> None:
    p = sub.add_parser(
        name,
        help="the attention explorer in the browser, and its JSON API",
        description="The attention explorer and its JSON API. Memory: the default models take about 150 MB; "
        "the first derived map (rollout, grad, ...) or grad-relevance alignment on a translator served from "
        "its ONNX export loads a torch copy of it once (about 250 MB more; --backend torch starts with it).",
    )
    p.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)"
    )
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    p.add_argument(
        "--translator", action="append", help="shipped name or path; repeat for several (default: shipped)"
    )
    p.add_argument(
        "--classifier", action="append", help="shipped name or path; repeat for several (default: shipped)"
    )
    p.add_argument(
        "--captioner",
        action="append",
        help="shipped name or path; repeat for several (default: digits-captioner when installed)",
    )
    p.add_argument(
        "--lm",
        action="append",
        help="a decoder-only LM for the Context page (enfr-llama or a Hugging Face folder); repeatable",
    )
    add_backend(p)
    p.add_argument(
        "--int8",
        action="store_true",
        help="int8 weights for the translators (faster; the shipped Transformers run torch-free so)",
    )
    p.add_argument("--no-batching", action="store_true", help="run each request alone (for comparison)")
    p.add_argument(
        "--rerank",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="rerank every translation's n-best list with its shipped channel model (the shipped "
        "translators that have one: the default, as their records say); --no-rerank: never",
    )
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
    p.add_argument(
        "--allow-host",
        action="append",
        metavar="NAME",
        help="also answer requests whose Host header is NAME (default: 127.0.0.1, localhost, ::1 and --host)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.max_batch < 1:
        raise UsageError(f"--max-batch must be >= 1, got {args.max_batch}")
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port must be in 0..65535, got {args.port}")
    if args.max_wait_ms < 0:
        raise UsageError(f"--max-wait-ms must be >= 0, got {args.max_wait_ms}")
    sock = bind(args.host, args.port)  # before the models load: a busy port fails in a second
    try:
        return _serve(args, sock)
    finally:
        sock.close()


def bind(host: str, port: int) -> socket.socket:
    """A listening-ready socket on ``host:port``; an unknown host or a port in use is a UsageError."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as e:
        raise UsageError(f"--host {host}: cannot resolve this name ({e.strerror})") from None
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as e:
        sock.close()
        raise UsageError(f"cannot listen on {host} port {port}: {e.strerror}") from None
    return sock


def _default_captioners() -> list[str]:
    from ..pretrained import DEFAULTS, shipped

    return [DEFAULTS["captioning"]] if DEFAULTS["captioning"] in shipped() else []


def _serve(args: argparse.Namespace, sock: socket.socket) -> int:
    import uvicorn

    from ..pretrained import DEFAULTS
    from ..serve import ModelSet, create_app

    if args.host not in ("127.0.0.1", "localhost", "::1"):
        log.warning(f"--host {args.host} makes the explorer reachable from other machines")
    models = ModelSet(
        args.translator or [DEFAULTS["translation"]],
        args.classifier or [DEFAULTS["classification"]],
        args.backend,
        args.int8,
        captioners=args.captioner if args.captioner is not None else _default_captioners(),
        rerank=args.rerank,
        lms=args.lm or [],
    )
    hosts = [*(args.allow_host or []), args.host]
    app = create_app(
        models,
        batching=not args.no_batching,
        cors=args.cors,
        max_wait=args.max_wait_ms / 1000,
        max_batch=args.max_batch,
        hosts=[h for h in hosts if h not in ("0.0.0.0", "::")],
    )
    names = ", ".join([*models.translators, *models.classifiers, *models.captioners, *models.lms])
    port = sock.getsockname()[1]
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"attnkit explorer on http://{shown}:{port}/ ({names}); Ctrl-C stops it", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False))
    with contextlib.suppress(
        KeyboardInterrupt
    ):  # uvicorn re-raises the Ctrl-C it stopped on: the way to stop
        server.run(sockets=[sock])
    log.info("attnkit explorer stopped")
    return 0
