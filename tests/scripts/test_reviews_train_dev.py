"""scripts/reviews_train_dev.py: every train and dev review once, in order, and no test review."""

import gzip
import json
import subprocess
import sys
from pathlib import Path

from attnkit.datasets import document_split

ROOT = Path(__file__).resolve().parents[2]


def _ids(split: str) -> list[int]:
    with gzip.open(document_split("reviews", split), "rt", encoding="utf-8") as handle:
        return [json.loads(line)["id"] for line in handle if line.strip()]


def test_train_then_dev_and_nothing_from_test(tmp_path):
    out = tmp_path / "sub" / "all.jsonl"
    done = subprocess.run(
        [sys.executable, "scripts/reviews_train_dev.py", str(out)], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    written = [json.loads(line)["id"] for line in out.read_text(encoding="utf-8").splitlines()]
    assert written == _ids("train") + _ids("dev")
    assert not set(written) & set(_ids("test"))
