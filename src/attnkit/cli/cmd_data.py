"""``attnkit data NAME SPLIT [--side src|tgt]``: the path of a shipped dataset file, for other commands:
``attnkit faithfulness --data "$(attnkit data reviews test)"``, ``attnkit evaluate --src "$(attnkit data
tatoeba-eng-fra test)" --ref "$(attnkit data tatoeba-eng-fra test --side tgt)"``."""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(sub: Any, name: str) -> None:
    from ..datasets import DOCUMENTS, PARALLEL

    p = sub.add_parser(name, help="print the path of a shipped dataset's split (to pass to other commands)")
    p.add_argument("dataset", choices=sorted({*PARALLEL, *DOCUMENTS}), help="a shipped dataset")
    p.add_argument("split", choices=("train", "dev", "test"), help="which split")
    p.add_argument(
        "--side",
        choices=("src", "tgt"),
        default="src",
        help="parallel data: the source (default) or the target side",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..datasets import DOCUMENTS, document_split, parallel_split

    if args.dataset in DOCUMENTS:
        print(document_split(args.dataset, args.split))
    else:
        print(parallel_split(args.dataset, args.split)[args.side == "tgt"])
    return 0
