"""The one name table resolves: every entry names a real object of the right kind, the derived lists
agree with it, and the CLI imports no torch."""

import inspect
import subprocess
import sys

import pytest

from attnkit import names
from attnkit.attention import SCORERS, Scorer, build_scorer
from attnkit.config import ExperimentConfig, validate
from attnkit.errors import UsageError
from attnkit.models import MODELS, build_model


def test_every_scorer_name_resolves_to_a_scorer_class_and_aliases_share_one():
    for name in names.SCORERS:
        cls = SCORERS.get(name)
        assert inspect.isclass(cls) and issubclass(cls, Scorer), name
        assert isinstance(build_scorer(name, 4), cls)
    assert SCORERS.get("bahdanau") is SCORERS.get("additive")
    assert SCORERS.get("bilinear") is SCORERS.get("general")


def test_every_model_name_builds_a_model_of_its_task():
    for name in names.MODELS:
        task = MODELS.task(name)
        config = ExperimentConfig(name=f"tiny-{name}", task=task)
        config.model.name = name
        validate(config)  # the config layer accepts the pair the table gives
        model = build_model(config.model, 12, num_classes=3, target_ids=list(range(12)))
        assert sum(p.numel() for p in model.parameters()) > 0, name
    assert MODELS.tasks() == names.MODEL_TASKS
    assert set(names.EXPORT_KINDS) == set(names.MODELS) - set(names.SECTIONS)


def test_unknown_names_list_the_valid_ones():
    with pytest.raises(UsageError, match="unknown model 'gpt'; valid names: captioner, han, hard_captioner"):
        MODELS.get("gpt")
    with pytest.raises(UsageError, match="unknown scorer 'cosine'; valid names: additive, bahdanau"):
        build_scorer("cosine", 4)


def test_help_and_list_import_no_torch():
    code = (
        "import sys\nfrom attnkit.cli.main import main\n"
        "for argv in (['--help'], ['translate', '--help'], ['train', '--help'], ['list']):\n"
        "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
        "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "NO-TORCH"
