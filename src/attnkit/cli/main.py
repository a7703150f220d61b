"""``attnkit`` entry point. Exit codes: 0 success, 2 a user's mistake (``AttnkitError``, or a file that
cannot be opened), 1 a bug (with its traceback), 130 interrupted."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import signal
import sys
import traceback
import warnings
from collections.abc import Sequence
from typing import Any, TextIO

from ..errors import AttnkitError, UsageError
from ..log import configure, log

# command -> the module (attnkit.cli.cmd_*) whose ``add_parser`` and ``run`` serve it; a command's module
# is imported only when the command runs (or when help lists them all): start-up reads one.
COMMANDS = {
    "translate": "cmd_translate",
    "evaluate": "cmd_evaluate",
    "align": "cmd_align",
    "faithfulness": "cmd_faithfulness",
    "heads": "cmd_heads",
    "train": "cmd_train",
    "classify": "cmd_classify",
    "evaluate-classifier": "cmd_classify",
    "caption": "cmd_caption",
    "evaluate-captioner": "cmd_caption",
    "plot": "cmd_plot",
    "average": "cmd_average",
    "ensemble": "cmd_ensemble",
    "convert": "cmd_convert",
    "export": "cmd_export",
    "serve": "cmd_serve",
    "list": "cmd_list",
    "fetch": "cmd_fetch",
    "data": "cmd_data",
    "compare": "cmd_compare",
    "inspect": "cmd_inspect",
}
GLOBAL_FLAGS = ("-q", "--quiet", "--debug")


# OS errors about a path the user named: a missing input, a folder where a file was expected, no permission.
FILE_ERRORS = (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError, FileExistsError)
# Optional dependencies -> the extra that installs them (pyproject.toml).
EXTRAS = {
    "torch": "torch",
    "sacrebleu": "torch",
    "matplotlib": "torch",
    "starlette": "serve",
    "uvicorn": "serve",
    "onnx": "export",
    "captum": "faithfulness",
    "transformers": "hf",
}
__all__ = ["UsageError", "build_parser", "entry", "main"]


class _Parser(argparse.ArgumentParser):
    """argparse whose errors are one line and exit 2 (as argparse does), with the valid choices named."""

    def error(self, message: str) -> Any:
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or with ``only`` the global options and that one command."""
    parser = _Parser(prog="attnkit", description="Attention in sequence models, made real.")
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="warnings and errors only; no progress bars"
    )
    parser.add_argument(
        "--debug", action="store_true", help="show the traceback of user errors too (for bug reports)"
    )
    from ..version import __version__

    parser.add_argument("--version", action="version", version=f"attnkit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module in COMMANDS.items():
        if only is None or name == only:
            importlib.import_module(f"{__package__}.{module}").add_parser(sub, name)
    return parser


def _named_command(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names after the global options, if it is one (else None: the whole parser
    answers, listing every command)."""
    words = [word for word in argv if word not in GLOBAL_FLAGS]
    return words[0] if words and words[0] in COMMANDS else None


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_named_command(argv))
    args = parser.parse_args(argv)
    configure(quiet=args.quiet)
    warnings.showwarning = _one_line_warning  # the CLI's own choice: a warning is one line, not two
    try:
        return int(args.run(args) or 0)
    except AttnkitError as exc:
        return _user_error(args, str(exc))
    except FILE_ERRORS as exc:
        if exc.filename is None:  # not about a path the user gave: a bug
            raise
        return _user_error(args, f"{exc.filename}: {exc.strerror or exc}")
    except ModuleNotFoundError as exc:
        extra = EXTRAS.get((exc.name or "").split(".")[0])
        if extra is None:
            raise
        return _user_error(
            args, f"this needs {exc.name}, which is not installed: pip install 'attnkit[{extra}]'"
        )
    except KeyboardInterrupt as exc:  # one line; a job that kept its finished parts says so (engine)
        print(f"attnkit {args.command}: interrupted" + (f": {exc}" if str(exc) else ""), file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


def _one_line_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    log.warning(f"warning: {message}")


def _user_error(args: argparse.Namespace, message: str) -> int:
    if args.debug:
        traceback.print_exc()
    print(f"attnkit {args.command}: error: {message}", file=sys.stderr)  # always, even when quiet
    return 2


def entry() -> None:
    """The console script: Ctrl-C at any moment, imports included, exits 130 with one line."""
    from .interrupts import disarm

    try:
        code = main()
    except KeyboardInterrupt:
        print("attnkit: interrupted", file=sys.stderr)
        code = 130
    finally:
        # The work is done and written: a Ctrl-C (or a held one's re-check alarm) during the interpreter's
        # shutdown, where Python puts the default handlers back, would kill the process with no message.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        disarm()
    with contextlib.suppress(BrokenPipeError):  # a reader that went away (``| head``) is not an error
        sys.stdout.flush()
    sys.exit(code)
