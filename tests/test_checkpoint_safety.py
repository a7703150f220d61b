"""Loading a checkpoint never runs code from it; bad files get exit code 2 and one line."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

from attnkit.checkpoint import CheckpointError, convert_legacy, load_checkpoint
from attnkit.pretrained import shipped


class _Evil:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):  # what a crafted checkpoint does: run a command when unpickled
        return (os.system, (f"touch {self.marker}",))


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "attnkit", *args], capture_output=True, text=True, timeout=120
    )


def test_crafted_pickle_is_refused_and_never_runs(tmp_path):
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.pt"
    torch.save({"config": {"task": "translation"}, "model": _Evil(str(marker))}, evil)
    with pytest.raises(CheckpointError, match="refused"):
        load_checkpoint(evil)
    result = _cli("translate", "--model", str(evil), "Hello.")
    assert result.returncode == 2
    assert not marker.exists()
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "evil.pt" in lines[0] and "refused" in lines[0]
    assert "would call posix.system" in lines[0] or "would call nt.system" in lines[0]
    assert "--trust-pickle" not in lines[0]  # never suggested for a file that runs commands
    assert "Traceback" not in result.stderr
    with pytest.raises(CheckpointError, match="refused"):  # convert needs --trust-pickle for it
        convert_legacy(evil, tmp_path / "out.pt")
    assert not marker.exists()


@pytest.mark.parametrize("kind", ["truncated", "random", "empty", "json"])
def test_files_that_are_not_checkpoints_get_one_line_and_exit_2(tmp_path, kind):
    real = shipped()["reviews-han"].read_bytes()
    data = {
        "truncated": real[: len(real) // 2],
        "random": os.urandom(4096),
        "empty": b"",
        "json": b'{"config": {}}',
    }[kind]
    path = tmp_path / f"{kind}.pt"
    path.write_bytes(data)
    result = _cli("translate", "--model", str(path), "Hello.")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{kind}.pt" in lines[0] and "not an attnkit checkpoint" in lines[0]


def test_a_classifier_given_to_translate_is_named():
    result = _cli("translate", "--model", "reviews-han", "Hello.")
    assert result.returncode == 2
    assert "is a classification model, not a translation model" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_format_1_checkpoint_names_convert_and_converts(tmp_path):
    payload = load_checkpoint(shipped()["reviews-han"])
    old = payload.to_payload()
    old["rng"] = {"numpy": ("MT19937", __import__("numpy").arange(624, dtype="uint32"), 0, 0, 0.0)}
    path = tmp_path / "old.pt"
    torch.save(old, path)  # numpy objects: weights_only refuses them, as in format-1 files
    with pytest.raises(CheckpointError, match="--trust-pickle"):
        load_checkpoint(path)
    with pytest.warns(UserWarning, match="trust-pickle"):
        convert_legacy(path, tmp_path / "new.pt", trust_pickle=True)
    new = load_checkpoint(tmp_path / "new.pt", task="classification")
    stored = torch.load(tmp_path / "new.pt", weights_only=True, map_location="cpu")
    assert stored["format_version"] == 2 and new.vocabulary == payload.vocabulary
    plain = payload.to_payload()
    torch.save(plain, tmp_path / "plain.pt")  # a format-1 file with plain data only
    with pytest.raises(CheckpointError, match="attnkit convert"):
        load_checkpoint(tmp_path / "plain.pt")


def test_every_shipped_model_is_format_2_and_loads_safely():
    for name, path in shipped().items():
        stored = torch.load(path, weights_only=True, map_location="cpu")  # the file's own keys, as data
        assert (stored["format"], stored["format_version"]) == ("attnkit-checkpoint", 2), name
        assert load_checkpoint(path).config.name, name


def test_the_typed_checkpoint_names_a_wrong_or_unknown_field(tmp_path):
    from attnkit.checkpoint import INFERENCE_FIELDS, Checkpoint, save_payload

    ckpt = load_checkpoint(shipped()["reviews-han"])
    assert isinstance(ckpt, Checkpoint) and ckpt.task == "classification" and ckpt.optimizer is None
    assert set(ckpt.to_payload()) <= set(INFERENCE_FIELDS) | {"model"}
    with pytest.raises(CheckpointError, match="field 'labels' must be list, got str"):
        save_payload({**ckpt.to_payload(), "labels": "12345"}, tmp_path / "bad.pt")
    with pytest.raises(CheckpointError, match="unknown field 'colour'"):
        save_payload({**ckpt.to_payload(), "colour": "red"}, tmp_path / "bad.pt")
    assert not (tmp_path / "bad.pt").exists()  # refused before anything was written
    torch.save(
        {**ckpt.to_payload(), "format": "attnkit-checkpoint", "format_version": 2, "step": "9"},
        tmp_path / "typed.pt",
    )
    with pytest.raises(CheckpointError, match="field 'step' must be int, got str"):
        load_checkpoint(tmp_path / "typed.pt")


def test_the_config_is_typed_once_and_a_bad_key_names_the_field(tmp_path):
    from attnkit.checkpoint import save_payload
    from attnkit.config import ExperimentConfig, to_dict
    from attnkit.models.options import HANConfig

    ckpt = load_checkpoint(shipped()["reviews-han"])
    assert isinstance(ckpt.config, ExperimentConfig) and ckpt.config.task == "classification"
    assert ckpt.ensemble and all(isinstance(m, ExperimentConfig) for m in ckpt.ensemble)
    assert all(isinstance(m.model.options, HANConfig) for m in [ckpt.config, *ckpt.ensemble])
    stored = ckpt.to_payload()
    assert stored["config"] == to_dict(ckpt.config) and isinstance(stored["ensemble"][0], dict)
    assert set(stored["config"]["model"]) == {"name", "han"} == set(stored["ensemble"][0]["model"])
    config = to_dict(ckpt.config)
    config["model"]["han"]["colour"] = "red"
    bad = {**stored, "config": config, "format": "attnkit-checkpoint", "format_version": 2}
    torch.save(bad, tmp_path / "bad.pt")
    with pytest.raises(CheckpointError, match=r"field 'config': unknown config key 'model.han.colour'"):
        load_checkpoint(tmp_path / "bad.pt")
    members = [{**to_dict(ckpt.ensemble[0]), "layers": 2}]
    with pytest.raises(CheckpointError, match=r"field 'ensemble\[0\]': unknown config key 'layers'"):
        save_payload({**stored, "ensemble": members}, tmp_path / "bad2.pt")
    assert not (tmp_path / "bad2.pt").exists()


def test_a_config_from_before_0_2_loads_with_its_training_options_moved(tmp_path):
    """0.1 kept every model's section and the HAN's training-only options (class weighting, word vectors)
    in ``model.han``; each member of an ensemble kept its model config only. They load as they meant."""
    import copy

    raw = torch.load(shipped()["reviews-han"], map_location="cpu", weights_only=True)
    assert set(raw["config"]["model"]) == {"name", "rnn", "transformer", "han"}  # the 0.1 layout
    old = copy.deepcopy(raw)
    old["ensemble"] = copy.deepcopy(old["ensemble"])  # member 0 was stored as the config's model itself
    old["config"]["model"]["han"]["class_weighting"] = "inverse"
    old["ensemble"][1]["han"]["class_weighting"] = "none"
    torch.save(old, tmp_path / "old.pt")
    ckpt = load_checkpoint(tmp_path / "old.pt")
    assert ckpt.config.training.class_weighting == "inverse"
    assert ckpt.config.training.word2vec_epochs == raw["config"]["model"]["han"]["word2vec_epochs"] == 5
    kinds = [m.training.class_weighting for m in ckpt.ensemble or []]
    assert kinds == ["sqrt_inverse", "none", "sqrt_inverse", "sqrt_inverse"]
    vectors = [m.training.word2vec_vectors for m in ckpt.ensemble or []]
    assert vectors == [m["han"]["word2vec_vectors"] for m in raw["ensemble"]]
    assert [m.model.han.word_dropout for m in ckpt.ensemble or []] == [0.2] * 4
