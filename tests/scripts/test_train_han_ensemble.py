"""scripts/train_han_ensemble.sh on a tiny review file: members share word2vec, one ensemble comes out."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attnkit.checkpoint import load_checkpoint
from tests.helpers import tiny_han_run

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # two subprocess training runs: in CI's slow pass (make test-slow)
def test_two_members_share_the_first_ones_word2vec_and_make_one_ensemble(tmp_path):
    args = tiny_han_run(
        tmp_path,
        **{
            "training.word2vec_epochs": 1,
            "training.max_steps": 8,
            "training.validate_every": 2,
            "training.warmup_steps": 1,
        },
    )
    out = tmp_path / "ens"
    env = {**os.environ, "BIN": str(Path(sys.executable).parent), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        ["bash", "scripts/train_han_ensemble.sh", str(out), "2", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    assert "vectors from" in (out / "s13.log").read_text()  # the second member reused member 12's vectors
    assert "word2vec epoch" not in (out / "s13.log").read_text()
    ensemble = load_checkpoint(out / "ensemble.pt")
    assert len(ensemble.ensemble or []) == 2 and len(ensemble.class_weights or []) == 3
    assert json.loads((out / "wall.json").read_text())["members"] == 2
