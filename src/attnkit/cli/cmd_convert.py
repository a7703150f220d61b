"""``attnkit convert OLD NEW [--trust-pickle]``: rewrite an earlier attnkit checkpoint in the safe format."""

from __future__ import annotations

import argparse
from typing import Any

from ..log import log


def add_parser(sub: Any, name: str) -> None:
    p = sub.add_parser(name, help="rewrite a checkpoint of an earlier attnkit in the safe format 2")
    p.add_argument("old", help="checkpoint written by an earlier attnkit")
    p.add_argument("new", help="where to write the converted checkpoint")
    p.add_argument(
        "--trust-pickle",
        action="store_true",
        help="allow unpickling arbitrary Python objects (runs code from the file: only for files you trust)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..checkpoint import convert_legacy
    from ..files import refuse_overwrite

    refuse_overwrite(args.new, {"OLD": args.old}, "NEW")

    payload = convert_legacy(args.old, args.new, trust_pickle=args.trust_pickle)
    log.info(f"converted {args.old} ({payload.task}) -> {args.new}")
    return 0
