"""``attnkit compare --model A --model B --src FILE [--ref FILE] --html OUT``: two translators."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import UsageError
from ..log import log


def add_parser(sub: Any, name: str) -> None:
    p = sub.add_parser(
        name, help="two translators of one direction side by side: outputs, attention, BLEU, agreement"
    )
    p.add_argument("--model", action="append", required=True, help="give it twice: model A, then model B")
    p.add_argument("--src", required=True, help="source sentences, one per line (plain or .gz)")
    p.add_argument("--ref", help="reference translations, line-aligned with --src (adds BLEU)")
    p.add_argument("--html", required=True, metavar="FILE", help="the offline page to write")
    p.add_argument("--beam", type=int, default=5, help="beam size (default 5)")
    p.add_argument("--limit", type=int, default=None, help="only the first N sentences")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..data.parallel import read_lines
    from ..files import refuse_overwrite, refuse_same_outputs
    from ..notebook import compare

    if len(args.model) != 2:
        raise UsageError(f"--model: give exactly two models (A and B), got {len(args.model)}")
    if args.beam < 1 or (args.limit is not None and args.limit < 1):
        raise UsageError("--beam and --limit must be at least 1")
    refuse_same_outputs({"--html": args.html})
    refuse_overwrite(args.html, {"--src": args.src, "--ref": args.ref}, "--html")
    sources = read_lines(args.src)[: args.limit]
    references = read_lines(args.ref)[: args.limit] if args.ref else None
    if not sources:
        raise UsageError(f"{args.src} has no sentences")
    if references is not None and len(references) != len(sources):
        raise UsageError(f"{args.src} has {len(sources)} lines but {args.ref} has {len(references)}")
    view = compare(args.model[0], args.model[1], sources, references, beam=args.beam, names=tuple(args.model))
    view.save(args.html)
    log.info(f"comparison of {len(sources)} sentences written to {args.html}")
    return 0
