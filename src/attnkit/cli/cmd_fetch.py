"""``attnkit fetch NAME... --from SOURCE``: models and datasets into the cache, checked by SHA-256."""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(sub: Any, name: str) -> None:
    p = sub.add_parser(name, help="fetch shipped models or datasets by name into the cache (verified)")
    p.add_argument("names", nargs="+", help="model or dataset names (see attnkit list), or 'all'")
    p.add_argument(
        "--from",
        dest="source",
        metavar="SOURCE",
        help="a folder holding pretrained/ and datasets/ (a clone's src/attnkit) or its http(s) URL "
        "(default: $ATTNKIT_SOURCE)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from .. import store
    from ..log import log

    names = args.names
    if names == ["all"]:
        names = [name for kind in store.KINDS for name in store.names(kind)]
    for name in names:
        folder = store.fetch(name, args.source)
        log.info(f"{name}: {folder}")
    return 0
