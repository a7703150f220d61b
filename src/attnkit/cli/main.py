"""``attnkit`` entry point. Exit codes: 0 success, 2 usage or input error, 1 unexpected failure."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ..log import configure
from . import (
    cmd_align,
    cmd_average,
    cmd_classify,
    cmd_convert,
    cmd_ensemble,
    cmd_evaluate,
    cmd_export,
    cmd_faithfulness,
    cmd_list,
    cmd_plot,
    cmd_serve,
    cmd_train,
    cmd_translate,
)

COMMANDS = {
    "translate": cmd_translate,
    "evaluate": cmd_evaluate,
    "align": cmd_align,
    "faithfulness": cmd_faithfulness,
    "train": cmd_train,
    "classify": cmd_classify,
    "evaluate-classifier": cmd_classify,
    "plot": cmd_plot,
    "average": cmd_average,
    "ensemble": cmd_ensemble,
    "convert": cmd_convert,
    "export": cmd_export,
    "serve": cmd_serve,
    "list": cmd_list,
}


class UsageError(Exception):
    """Bad input from the user: printed without a traceback, exit code 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="attnkit", description="Attention in sequence models, made real.")
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="warnings and errors only; no progress bars"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module in COMMANDS.items():
        module.add_parser(sub, name)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure(quiet=args.quiet)
    try:
        return int(args.run(args) or 0)
    except (ValueError, FileNotFoundError, UsageError, IsADirectoryError, PermissionError) as exc:
        print(f"attnkit {args.command}: error: {exc}", file=sys.stderr)  # always, even when quiet
        return 2
    except KeyboardInterrupt:
        print(f"attnkit {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


def entry() -> None:
    sys.exit(main())
