"""Every command in the README runs as written: each `attnkit` line parses with the CLI's own parser (its
`$(attnkit data ...)` expanded), the files it reads exist once the lines before it ran, and the quick ones
run to exit 0 in a fresh folder (the README's order). Training, serving, torchrun and the long evaluations
are parsed, not run."""

from __future__ import annotations

import io
import re
import shlex
import subprocess
from contextlib import redirect_stdout
from pathlib import Path

from attnkit.cli.main import build_parser, main

ROOT = Path(__file__).resolve().parents[1]
RUN = {"translate", "classify", "align", "data", "list", "caption", "plot", "inspect"}  # quick enough here
FIRST_RUN_ONLY = {"export"}  # run once: writes a folder the later lines read


def _lines() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    return [line.split("  #")[0].strip() for block in blocks for line in block.splitlines() if line.strip()]


def _expand(line: str) -> str:
    """``$(attnkit data ...)`` replaced by what it prints."""

    def data(match: re.Match[str]) -> str:
        out = io.StringIO()
        with redirect_stdout(out):
            assert main(shlex.split(match.group(1))[1:]) == 0
        return shlex.quote(out.getvalue().strip())

    return re.sub(r'"\$\((attnkit data [^)]*)\)"', data, line)


def test_the_readme_has_its_examples():
    lines = _lines()
    assert any(line.startswith("attnkit translate") for line in lines) and len(lines) > 20


def test_every_readme_command_runs_as_written(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tests").symlink_to(ROOT / "tests")  # the caption example's image, as in a clone
    parser = build_parser()
    for line in _lines():
        if line.startswith("printf"):
            subprocess.run(line, shell=True, check=True, cwd=tmp_path)
            continue
        if line.startswith(("make ", "python ", "torchrun ")) or not line.startswith(("attnkit", "echo")):
            continue
        if line.startswith("echo"):
            text, _, command = line.partition("|")
            argv = shlex.split(_expand(command.strip()))[1:]
            monkeypatch.setattr("sys.stdin", io.StringIO(shlex.split(text)[1] + "\n"))
        else:
            argv = shlex.split(_expand(line))[1:]
        args = parser.parse_args(argv)  # exits 2 on an option the CLI does not have
        for flag in ("src", "tgt", "ref", "data", "gold", "file"):
            value = getattr(args, flag, None)
            assert value is None or ":" in str(value) or Path(value).exists(), (line, flag, value)
        if args.command in RUN | FIRST_RUN_ONLY and not (args.command == "align" and "--gold" in argv):
            assert main(argv) == 0, (line, capsys.readouterr().err)
