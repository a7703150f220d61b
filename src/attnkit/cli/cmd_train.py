"""``attnkit train CONFIG [--set key=value ...] [--resume]``."""

from __future__ import annotations

import argparse
import time
from typing import Any

from ..errors import UsageError


def add_parser(sub: Any, name: str) -> None:
    p = sub.add_parser(name, help="train a model from a YAML config")
    p.add_argument(
        "config", help="YAML experiment file, or the name of a shipped one (toy-copy, enfr-transformer, ...)"
    )
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config field, e.g. --set training.max_minutes=25",
    )
    p.add_argument("--resume", action="store_true", help="continue from the last checkpoint in out_dir")
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="start a new run in an out_dir that holds one (its checkpoints and log are deleted first)",
    )
    p.add_argument(
        "--skip-bad-lines",
        action="store_true",
        help="skip malformed data lines with one counted warning instead of stopping",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    started = time.time()
    from ..config import load_config
    from ..training.run import train

    config = load_config(
        args.config, args.overrides + (["data.skip_bad_lines=true"] if args.skip_bad_lines else [])
    )
    if args.resume and args.overwrite:
        raise UsageError("--resume continues the run in out_dir, --overwrite replaces it: give one")
    reason = train(config, resume=args.resume, started=started, overwrite=args.overwrite)
    return 130 if reason == "interrupted" else 0
