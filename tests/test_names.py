"""The CLI's torch-free name lists equal the registries they mirror, and the CLI imports no torch."""

import subprocess
import sys

from attnkit import names
from attnkit.attention import SCORERS
from attnkit.config import MODEL_TASKS
from attnkit.evaluation.alignment import METHODS
from attnkit.models import MODELS


def test_names_mirror_the_registries():
    assert list(names.SCORERS) == SCORERS.names()
    assert tuple(MODELS.names()) == names.MODELS
    assert MODELS.tasks() == MODEL_TASKS
    assert names.ALIGNMENT_METHODS == METHODS


def test_help_and_list_import_no_torch():
    code = (
        "import sys\nfrom attnkit.cli.main import main\n"
        "for argv in (['--help'], ['translate', '--help'], ['train', '--help'], ['list']):\n"
        "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
        "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "NO-TORCH"
