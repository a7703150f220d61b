"""Metrics against hand-computed cases."""

import numpy as np
import pytest

from attnkit.alignment.links import aer, align, pharaoh, read_naacl
from attnkit.evaluation.classification import classification_report
from attnkit.evaluation.metrics import corpus_scores
from attnkit.evaluation.report import mean_entropy


def test_aer_hand_computed():
    sure, possible = [{(0, 0), (1, 1)}], [{(0, 0), (1, 1), (2, 1)}]
    assert aer([{(0, 0), (1, 1)}], sure, possible).aer == 0.0
    # A = {(0,0), (2,1)}: |A&S| = 1, |A&P| = 2, |A| = 2, |S| = 2 -> 1 - 3/4
    score = aer([{(0, 0), (2, 1)}], sure, possible)
    assert score.aer == pytest.approx(0.25) and score.precision == 1.0 and score.recall == 0.5
    assert aer([set()], sure, possible).aer == pytest.approx(1.0)


def test_alignment_methods():
    w = np.array([[0.7, 0.3, 0.0], [0.1, 0.2, 0.7], [0.0, 0.1, 0.9]])  # (T=3, S=3)
    assert align(w, "argmax") == {(0, 0), (2, 1), (2, 2)}
    assert align(w, "intersect") == {(0, 0), (2, 2)}
    # columns' argmax: source 0 -> target 0, source 1 -> target 0, source 2 -> target 2
    assert align(w, "union") == {(0, 0), (2, 1), (2, 2), (1, 0)}
    assert align(w, "threshold", 0.3) == {(0, 0), (1, 0), (2, 1), (2, 2)}
    assert pharaoh({(2, 1), (0, 0)}) == "0-0 2-1"
    with pytest.raises(ValueError, match="valid: argmax"):
        align(w, "viterbi")


def test_read_naacl(tmp_path):
    path = tmp_path / "g.naacl"
    path.write_text("1 1 1 S\n1 2 3 P\n2 1 1\n")
    sure, possible = read_naacl(path, 2)
    assert sure == [{(0, 0)}, {(0, 0)}] and possible == [{(0, 0), (1, 2)}, {(0, 0)}]
    path.write_text("1 1 x S\n")
    with pytest.raises(ValueError, match="g.naacl:1"):
        read_naacl(path, 2)


def test_classification_report_hand_computed():
    report = classification_report([0, 0, 1, 1], [0, 1, 1, 1], 3)
    assert report["accuracy"] == 0.75
    assert report["confusion"] == [[1, 1, 0], [0, 2, 0], [0, 0, 0]]
    assert report["per_class_f1"] == pytest.approx([2 / 3, 0.8, 0.0])
    assert report["macro_f1"] == pytest.approx((2 / 3 + 0.8) / 3)


def test_bleu_chrf_signatures():
    s = corpus_scores(["le chat est assis sur le tapis ."], ["le chat est assis sur le tapis ."])
    assert s.bleu == pytest.approx(100.0) and s.chrf == pytest.approx(100.0)
    assert "tok:13a" in s.bleu_signature and "nc:6" in s.chrf_signature


def test_mean_entropy_over_rows():
    rows = [np.array([[1.0, 0.0], [0.5, 0.5]]), np.zeros((0, 0))]
    assert mean_entropy(rows) == pytest.approx(np.log(2) / 2)


def test_bootstrap_intervals_hold_the_point_estimate_and_collapse_when_constant():
    from attnkit.evaluation.classification import bootstrap_intervals, classification_report

    gold = [0, 1, 2, 0, 1, 2, 0, 1, 2, 0] * 10
    pred = [0, 1, 2, 0, 1, 1, 0, 2, 2, 1] * 10
    point = classification_report(gold, pred, 3)
    ci = bootstrap_intervals(gold, pred, 3)
    assert ci["accuracy"][0] < point["accuracy"] < ci["accuracy"][1]
    assert ci["macro_f1"][0] < point["macro_f1"] < ci["macro_f1"][1]
    assert bootstrap_intervals(gold, gold, 3) == {"accuracy": [1.0, 1.0], "macro_f1": [1.0, 1.0]}
