"""Checkpoint averaging: the mean of the weights, ties kept, mismatched runs refused by file name."""

import pytest
import torch

from attnkit.checkpoint import load_checkpoint, save_payload
from attnkit.training.average import average_checkpoints


def _variant(src, path, scale):
    ckpt = load_checkpoint(src)
    shared = {}
    ckpt.model = {
        k: shared.setdefault(v.data_ptr(), v * scale if v.is_floating_point() else v)
        for k, v in ckpt.model.items()
    }
    ckpt.train_time = 10.0 * scale
    save_payload(ckpt, path)
    return path


def test_average_is_the_mean_and_keeps_tied_weights_tied(translator_ckpt, tmp_path):
    paths = [_variant(translator_ckpt, tmp_path / f"step-{i}.pt", s) for i, s in enumerate((1.0, 2.0, 6.0))]
    out = tmp_path / "avg.pt"
    average_checkpoints(paths, out)
    base, avg = load_checkpoint(translator_ckpt).model, load_checkpoint(out)
    for key, value in base.items():
        if value.is_floating_point():
            torch.testing.assert_close(avg.model[key], value * 3.0)
    assert avg.model["embedding.weight"].data_ptr() == avg.model["output.embedding.weight"].data_ptr()
    assert avg.tokenizer == load_checkpoint(translator_ckpt).tokenizer and avg.optimizer is None
    assert avg.train_time == 60.0  # the last checkpoint's accounting, kept for training reports
    import attnkit

    assert attnkit.load(out).translate(["ab"], beam=2)[0].attention.ndim == 2


def test_average_refuses_checkpoints_of_different_runs(translator_ckpt, transformer_ckpt, tmp_path):
    with pytest.raises(ValueError, match="model differs .*model.name: .rnn. there, .transformer. here"):
        average_checkpoints([translator_ckpt, transformer_ckpt], tmp_path / "avg.pt")
    with pytest.raises(ValueError, match="at least 2"):
        average_checkpoints([translator_ckpt], tmp_path / "avg.pt")
    assert not (tmp_path / "avg.pt").exists()


def test_average_command_writes_a_loadable_checkpoint(translator_ckpt, tmp_path, capsys):
    from attnkit.cli.main import main

    paths = [_variant(translator_ckpt, tmp_path / f"step-{i}.pt", s) for i, s in enumerate((1.0, 3.0))]
    assert main(["average", *map(str, paths), "--out", str(tmp_path / "avg.pt")]) == 0
    assert "averaged 2 checkpoints" in capsys.readouterr().err
    base, avg = load_checkpoint(translator_ckpt).model, load_checkpoint(tmp_path / "avg.pt").model
    for key, value in base.items():  # what the command wrote is the mean of (1x, 3x): 2x
        if value.is_floating_point():
            torch.testing.assert_close(avg[key], value * 2.0)
    assert (
        main(["average", str(paths[0]), str(tmp_path / "missing.pt"), "--out", str(tmp_path / "x.pt")]) == 2
    )


def _reseeded(src, path, seed, hidden):
    """Another member: same vocabulary and labels, other weights and size."""
    from attnkit.models import build_model

    ckpt = load_checkpoint(src)
    config = ckpt.config
    config.model.han.word_hidden = hidden
    torch.manual_seed(seed)
    model = build_model(config.model, len(ckpt.vocabulary), num_classes=len(ckpt.labels))
    ckpt.model, ckpt.config = model.state_dict(), config
    save_payload(ckpt, path)
    return path


def test_ensemble_probabilities_and_attention_are_the_members_means(classifier_ckpt, tmp_path):
    from attnkit.classifier import Classifier
    from attnkit.training.average import ensemble_checkpoints

    paths = [classifier_ckpt, _reseeded(classifier_ckpt, tmp_path / "b.pt", 5, hidden=6)]
    ensemble_checkpoints(paths, tmp_path / "ens.pt")
    texts = ["love it. great fit!", "terrible fabric. ripped. ok i guess"]
    members = [Classifier.from_checkpoint(p).classify(texts) for p in paths]
    together = Classifier.from_checkpoint(tmp_path / "ens.pt").classify(texts)
    for i, result in enumerate(together):
        a, b = members[0][i], members[1][i]
        for label, p in result.probabilities.items():
            assert p == pytest.approx((a.probabilities[label] + b.probabilities[label]) / 2, abs=1e-6)
        assert result.sentence_weights == pytest.approx(
            [(x + y) / 2 for x, y in zip(a.sentence_weights, b.sentence_weights)], abs=1e-6
        )
        assert sum(result.sentence_weights) == pytest.approx(1.0, abs=1e-5)
    int8 = Classifier.from_checkpoint(tmp_path / "ens.pt", int8=True).classify(texts)
    for a, b in zip(int8, together):  # int8 weights: the same probabilities up to quantization error
        assert list(a.probabilities.values()) == pytest.approx(list(b.probabilities.values()), abs=0.02)


def test_ensemble_refuses_translators_and_other_vocabularies(classifier_ckpt, translator_ckpt, tmp_path):
    from attnkit.cli.main import main
    from attnkit.training.average import ensemble_checkpoints

    with pytest.raises(ValueError, match="single classifiers"):
        ensemble_checkpoints([classifier_ckpt, translator_ckpt], tmp_path / "e.pt")
    other = load_checkpoint(classifier_ckpt)
    other.vocabulary = other.vocabulary[:-1]
    save_payload(other, tmp_path / "other.pt")
    assert (
        main(["ensemble", str(classifier_ckpt), str(tmp_path / "other.pt"), "--out", str(tmp_path / "e.pt")])
        == 2
    )
    assert not (tmp_path / "e.pt").exists()


def test_checkpoints_that_differ_only_in_dropout_average(translator_ckpt, tmp_path):
    """Dropout does not change what the weights mean: a run continued with another dropout averages."""
    other = load_checkpoint(translator_ckpt)
    other.config.model.rnn.dropout = 0.5
    save_payload(other, tmp_path / "other.pt")
    average_checkpoints([translator_ckpt, tmp_path / "other.pt"], tmp_path / "avg.pt")
    averaged = load_checkpoint(tmp_path / "avg.pt")
    for key, value in load_checkpoint(translator_ckpt).model.items():
        torch.testing.assert_close(averaged.model[key], value)  # the same weights twice: their mean
