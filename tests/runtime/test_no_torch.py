"""The runtime path never imports torch: shipped models translate and classify in a process where
``import torch`` raises (an import hook), through the CLI as users run it."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from attnkit.pretrained import find_export

BLOCK = """
import sys
class NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("torch is blocked in this test")
        return None
sys.meta_path.insert(0, NoTorch())
from attnkit.cli.main import main
code = main(sys.argv[1:])
assert "torch" not in sys.modules
sys.exit(code)
"""


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", BLOCK, *args], capture_output=True, text=True, timeout=120)


SHIPPED = [
    "deen-rnn",
    "digits-captioner",
    "enfr-rnn",
    "enfr-transformer",
    "ende-transformer",
    "fren-rnn",
    "reviews-han",
]


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_models_have_exports_whose_files_match_their_checksums(name):
    from attnkit.runtime import read_manifest

    folder = find_export(name, "translation")
    assert folder is not None
    manifest = read_manifest(folder)  # verifies every file's SHA-256 against the manifest
    assert manifest.graphs and all(
        (folder / f).is_file() for files in manifest.graphs.values() for f in files.values()
    )


@pytest.mark.parametrize(
    ("model", "sentence", "start"),
    [("enfr-transformer", "The cat sits on the mat.", "Le chat"), ("fren-rnn", "Le chat dort.", "The cat")],
)
def test_other_shipped_translators_without_torch(model, sentence, start):
    """The Transformer's shipped export is int8 only (run with --int8); fren-rnn's is fp32."""
    flags = ["--int8"] if model.endswith("transformer") else []
    done = _run("translate", "--json", "--model", model, *flags, sentence)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["translation"].startswith(start)


def test_translate_without_torch():
    done = _run("translate", "--json", "--beam", "5", "--n-best", "2", "The cat sits on the mat.")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["translation"].startswith("Le chat")
    assert len(result["attention"]) == len(result["target_tokens"])
    assert len(result["alternatives"]) == 1


def test_caption_without_torch(tmp_path):
    """The shipped captioner reads a test-split digit string (handwriting it never saw) torch-free."""
    from PIL import Image

    from attnkit.datasets.digits import digit_strings

    truth = digit_strings("test", 1)[0]
    Image.fromarray(truth.image).save(tmp_path / "digits.png")
    done = _run("caption", "--json", "--beam", "3", str(tmp_path / "digits.png"))
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["caption"] == truth.caption
    assert len(result["attention"]) == len(truth.digits) and result["grid"] == [6, 24]


def test_classify_without_torch():
    done = _run("classify", "--json", "Runs small. Returned it.")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert sum(result["probabilities"].values()) == pytest.approx(1.0, abs=1e-4)
    assert [len(s) for s in result["sentences"]] == [len(w) for w in result["word_weights"]]


@pytest.mark.parametrize("name", SHIPPED)
def test_shipped_exports_were_made_from_the_shipped_weights(name):
    """A re-shipped model.pt with its old export would run the old model under backend auto."""
    import hashlib

    root = find_export(name, "translation")
    assert root is not None
    source = json.loads((root / "manifest.json").read_text())["meta"]["source_checkpoint"]
    weights = root.parent / "model.pt"
    assert source["file"] == "model.pt"
    assert source["sha256"] == hashlib.sha256(weights.read_bytes()).hexdigest(), f"re-export {name}"
