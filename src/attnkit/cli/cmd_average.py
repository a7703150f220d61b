"""``attnkit average CKPT CKPT [...] --out FILE``: average the weights of checkpoints of one run."""

from __future__ import annotations

import argparse
from typing import Any

from ..log import log


def add_parser(sub: Any, name: str) -> None:
    p = sub.add_parser(name, help="average the weights of several checkpoints of one run (for inference)")
    p.add_argument("checkpoints", nargs="+", help="step-N.pt files of one run, e.g. runs/x/step-*.pt")
    p.add_argument("--out", required=True, help="where to write the averaged checkpoint")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..files import refuse_overwrite
    from ..training.average import average_checkpoints

    refuse_overwrite(args.out, {f"input {i + 1}": c for i, c in enumerate(args.checkpoints)}, "--out")

    averaged = average_checkpoints(args.checkpoints, args.out)
    log.info(f"averaged {len(averaged['averaged_from'])} checkpoints into {args.out}")
    return 0
