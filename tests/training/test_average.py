"""Checkpoint averaging: the mean of the weights, ties kept, mismatched runs refused by file name."""

import pytest
import torch

from attnkit.training.average import average_checkpoints
from attnkit.training.checkpoint import atomic_torch_save, load_checkpoint


def _variant(src, path, scale):
    ckpt = load_checkpoint(src)
    shared = {}
    ckpt["model"] = {
        k: shared.setdefault(v.data_ptr(), v * scale if v.is_floating_point() else v)
        for k, v in ckpt["model"].items()
    }
    atomic_torch_save(ckpt, path)
    return path


def test_average_is_the_mean_and_keeps_tied_weights_tied(translator_ckpt, tmp_path):
    paths = [_variant(translator_ckpt, tmp_path / f"step-{i}.pt", s) for i, s in enumerate((1.0, 2.0, 6.0))]
    out = tmp_path / "avg.pt"
    average_checkpoints(paths, out)
    base, avg = load_checkpoint(translator_ckpt)["model"], load_checkpoint(out)
    for key, value in base.items():
        if value.is_floating_point():
            torch.testing.assert_close(avg["model"][key], value * 3.0)
    assert avg["model"]["embedding.weight"].data_ptr() == avg["model"]["output.embedding.weight"].data_ptr()
    assert avg["tokenizer"] == load_checkpoint(translator_ckpt)["tokenizer"] and "optimizer" not in avg
    import attnkit

    assert attnkit.load(out).translate(["ab"], beam=2)[0].attention.ndim == 2


def test_average_refuses_checkpoints_of_different_runs(translator_ckpt, transformer_ckpt, tmp_path):
    with pytest.raises(ValueError, match="model config differs"):
        average_checkpoints([translator_ckpt, transformer_ckpt], tmp_path / "avg.pt")
    with pytest.raises(ValueError, match="at least 2"):
        average_checkpoints([translator_ckpt], tmp_path / "avg.pt")
    assert not (tmp_path / "avg.pt").exists()


def test_average_command_writes_a_loadable_checkpoint(translator_ckpt, tmp_path, capsys):
    from attnkit.cli.main import main

    paths = [_variant(translator_ckpt, tmp_path / f"step-{i}.pt", s) for i, s in enumerate((1.0, 3.0))]
    assert main(["average", *map(str, paths), "--out", str(tmp_path / "avg.pt")]) == 0
    assert "averaged 2 checkpoints" in capsys.readouterr().err
    assert (
        main(["average", str(paths[0]), str(tmp_path / "missing.pt"), "--out", str(tmp_path / "x.pt")]) == 2
    )
