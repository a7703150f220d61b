"""What a command loads: its own module of the command line, no progress-bar library without a bar."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import sys
from attnkit.cli.main import main
main(sys.argv[1:])
loaded = sorted(m for m in sys.modules if m.startswith("attnkit.cli.cmd_") or m == "tqdm")
print("LOADED", " ".join(loaded))
"""


def _loaded(*argv: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=True)
    return done.stdout.rsplit("LOADED", 1)[1].split()


def test_a_command_imports_its_own_module_and_no_progress_bar_library():
    assert _loaded("-q", "data", "tatoeba-eng-fra", "dev") == ["attnkit.cli.cmd_data"]


def test_help_and_a_wrong_command_still_name_every_command(capsys):
    from attnkit.cli.main import COMMANDS, main

    with pytest.raises(SystemExit) as exit:
        main(["--help"])
    assert exit.value.code == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in COMMANDS)
    with pytest.raises(SystemExit) as exit:
        main(["translat"])
    assert exit.value.code == 2
    assert "invalid choice: 'translat' (choose from 'translate'," in capsys.readouterr().err


def test_version_is_one_line(capsys):
    from attnkit.cli.main import main
    from attnkit.version import __version__

    with pytest.raises(SystemExit) as exit:
        main(["--version"])
    assert exit.value.code == 0 and capsys.readouterr().out == f"attnkit {__version__}\n"
