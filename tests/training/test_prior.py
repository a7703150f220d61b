"""Prior correction (training.prior): the decision divides out tau of the training class weights."""

import json
import math

import pytest
import torch

from attnkit.checkpoint import load_checkpoint, save_payload
from attnkit.classifier import Classifier
from attnkit.training.prior import geometric_mean, prior_bias, stored_class_weights

TEXTS = ["love it. great fit!", "terrible fabric. ripped. ok i guess"]
WEIGHTS = [4.0, 2.0, 1.0, 1.0, 0.25]


def _with(ckpt_path, tmp_path, **extra):
    ckpt = load_checkpoint(ckpt_path)
    for name, value in extra.items():
        setattr(ckpt, name, value)
    path = tmp_path / "model.pt"
    save_payload(ckpt, path)
    return path


def test_tau_moves_the_decision_by_tau_log_weights(classifier_ckpt, tmp_path):
    path = _with(classifier_ckpt, tmp_path, class_weights=WEIGHTS)
    plain = Classifier.from_checkpoint(path).classify(TEXTS)  # no prior_correction kept: tau 0
    half = Classifier.from_checkpoint(path, prior_correction=0.5).classify(TEXTS)
    for a, b in zip(plain, half):
        expected = torch.tensor([a.probabilities[c] for c in a.probabilities]).log()
        expected = (expected - 0.5 * torch.tensor(WEIGHTS).log()).softmax(-1)
        got = torch.tensor([b.probabilities[c] for c in b.probabilities])
        torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-4)
        assert b.label == max(b.probabilities, key=b.probabilities.get)
        assert b.word_weights == a.word_weights  # attention is untouched


def test_the_checkpoint_keeps_its_tau_and_the_caller_can_override_it(classifier_ckpt, tmp_path):
    path = _with(classifier_ckpt, tmp_path, class_weights=WEIGHTS, prior_correction=1.0)
    ckpt = load_checkpoint(path)
    torch.testing.assert_close(prior_bias(ckpt), torch.tensor(WEIGHTS).log())
    assert (
        prior_bias(ckpt, 0.0) is None
        and Classifier.from_checkpoint(path, prior_correction=0).prior_bias is None
    )
    with pytest.raises(ValueError, match=r"prior correction must be in \[0, 1\]"):
        prior_bias(ckpt, 1.5)


def test_unweighted_training_means_no_change_and_unknown_weights_are_an_error(classifier_ckpt, tmp_path):
    unweighted = load_checkpoint(_with(classifier_ckpt, tmp_path, class_weights=[]))  # [] = unweighted
    torch.testing.assert_close(prior_bias(unweighted, 1.0), torch.zeros(5))
    unknown = load_checkpoint(classifier_ckpt)  # keeps no class weights, training data not given
    with pytest.raises(ValueError, match="does not keep its training class weights"):
        prior_bias(unknown, 0.5)


def test_old_checkpoints_recompute_the_weights_from_their_training_data(classifier_ckpt, tmp_path):
    data = tmp_path / "train.jsonl"
    rows = [{"text": "good", "label": c} for c in [1, 2, 3, 4, 5, 5, 5, 5]]
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    ckpt = load_checkpoint(classifier_ckpt)
    ckpt.config.data.train = [str(data)]
    ckpt.config.training.class_weighting = "sqrt_inverse"
    expected = [math.sqrt(8 / (5 * n)) for n in (1, 1, 1, 1, 4)]
    assert stored_class_weights(ckpt) == pytest.approx(expected)


def test_an_ensemble_keeps_the_geometric_mean_of_its_members_weights(classifier_ckpt, tmp_path):
    from attnkit.training.average import ensemble_checkpoints

    assert geometric_mean([[4.0, 1.0], None], 2) == pytest.approx([2.0, 1.0])
    a = _with(classifier_ckpt, tmp_path, class_weights=WEIGHTS)
    b = tmp_path / "b.pt"
    ckpt = load_checkpoint(classifier_ckpt)
    ckpt.class_weights = []  # trained unweighted: weights of 1
    save_payload(ckpt, b)
    combined = ensemble_checkpoints([a, b], tmp_path / "ens.pt")
    assert combined["class_weights"] == pytest.approx([w**0.5 for w in WEIGHTS])


def test_cli_reports_the_bias_and_refuses_a_bad_tau(classifier_ckpt, tmp_path, capsys):
    from attnkit.cli.main import main

    path = _with(classifier_ckpt, tmp_path, class_weights=WEIGHTS)
    data = tmp_path / "dev.jsonl"
    data.write_text(
        "\n".join(json.dumps({"text": t, "label": str(1 + i)}) for i, t in enumerate(TEXTS)) + "\n"
    )
    assert (
        main(
            [
                "evaluate-classifier",
                "--model",
                str(path),
                "--data",
                str(data),
                "--json",
                "--prior-correction",
                "1",
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["prior_bias"] == pytest.approx([math.log(w) for w in WEIGHTS], abs=1e-5)
    assert main(["classify", "--model", str(path), "--prior-correction", "2", "good"]) != 0
    assert "prior correction must be in [0, 1]" in capsys.readouterr().err
