"""``attnkit ensemble CKPT CKPT [...] --out FILE``: one classifier from several trained apart."""

from __future__ import annotations

import argparse
from typing import Any

from ..log import log


def add_parser(sub: Any, name: str) -> None:
    p = sub.add_parser(
        name, help="combine separately trained classifiers into one (mean of their probabilities)"
    )
    p.add_argument("checkpoints", nargs="+", help="HAN checkpoints sharing a vocabulary, e.g. other seeds")
    p.add_argument("--out", required=True, help="where to write the ensemble checkpoint")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..training.average import ensemble_checkpoints

    combined = ensemble_checkpoints(args.checkpoints, args.out)
    log.info(f"ensemble of {len(combined['ensemble_of'])} classifiers written to {args.out}")
    return 0
