"""The one alignment path: align_corpus's links, statuses and scores, and every surface printing it."""

import json

import numpy as np
import pytest

from attnkit.alignment.aligner import Matrices, align_corpus, corpus_matrices
from attnkit.alignment.links import align, length_order, symmetrize, word_matrices
from attnkit.cli.main import main

SOURCES, TARGETS = ["a b c"], ["x y"]
FORWARD = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]])  # target x source: x -> a, y -> c
BACKWARD = np.array([[0.9, 0.1], [0.6, 0.4], [0.2, 0.8]])  # source x target
GOLD = ([{(0, 0)}], [{(0, 0), (1, 1)}])  # sure (a, x); possible also (b, y)


def test_report_marks_each_link_against_gold_and_scores_aer_by_hand():
    report = align_corpus(None, SOURCES, TARGETS, gold=GOLD, matrices=Matrices([FORWARD]))
    [row] = report.rows()
    assert row["links"] == [[0, 0], [2, 1]]
    assert row["status"] == ["sure", "wrong"] and row["missed"] == []
    summary = report.summary()
    # AER = 1 - (|A & S| + |A & P|) / (|A| + |S|) = 1 - (1 + 1) / (2 + 1)
    assert summary["aer"] == pytest.approx(1 / 3, abs=1e-4)
    assert summary["precision"] == 0.5 and summary["recall"] == 1.0
    assert summary["symmetrize"] is None and summary["n_sentences"] == 1
    assert report.pharaoh() == ["0-0 2-1"]


def test_two_directions_are_combined_by_the_named_symmetrization():
    both = Matrices([FORWARD], [BACKWARD])
    for how in ("mean", "intersection", "union", "grow-diag-final"):
        report = align_corpus(None, SOURCES, TARGETS, method="argmax", how=how, matrices=both)
        assert report.links == [symmetrize(FORWARD, BACKWARD, how, "argmax")]
        assert report.settings["symmetrize"] == how
    assert align_corpus(None, SOURCES, TARGETS, matrices=both).summary() == {}  # no gold, no score


def test_a_translator_is_read_forward_and_with_its_reverse(translator_ckpt):
    from attnkit.translator import Translator

    model = Translator.from_checkpoint(translator_ckpt)
    src, tgt = ["ab cd ef", "cd ab"], ["ab cd ef", "cd ab"]
    one = align_corpus(model, src, tgt, method="intersect")
    assert one.links == [align(m, "intersect") for m in word_matrices(model, src, tgt)]
    two = align_corpus(model, src, tgt, reverse=model, how="union")
    back = word_matrices(model, tgt, src)
    expected = [symmetrize(f, b, "union") for f, b in zip(word_matrices(model, src, tgt), back)]
    assert two.links == expected
    reused = corpus_matrices(model, src, tgt, reverse=model)
    assert align_corpus(model, src, tgt, how="union", matrices=reused).links == expected


def test_length_order_sorts_each_window_and_keeps_windows_in_place():
    targets = ["x" * n for n in (5, 1, 3, 9, 2, 7, 4)]
    sources = ["a"] * len(targets)
    order = length_order(sources, targets, window=3)
    assert sorted(order) == list(range(7))
    assert order == [1, 2, 0, 4, 5, 3, 6]  # windows {0,1,2} {3,4,5} {6}, each by target length
    ties = length_order(["aaa", "a", "aa"], ["x", "x", "x"], window=8)
    assert ties == [1, 2, 0]  # then by source length


@pytest.mark.parametrize("scores", ["attention", "grad"])
def test_word_matrices_come_back_in_input_order_whatever_the_batching(translator_ckpt, scores):
    from attnkit.translator import Translator

    model = Translator.from_checkpoint(translator_ckpt)
    src = ["ab cd ef ab cd", "cd", "ef ab cd", "ab", "cd ef"]
    tgt = ["cd ab ef ab cd ef", "ab", "ab cd", "ef cd ab", "cd"]
    together = word_matrices(model, src, tgt, scores=scores)
    alone = [word_matrices(model, [s], [t], scores=scores)[0] for s, t in zip(src, tgt)]
    assert [m.shape for m in together] == [(len(t.split()), len(s.split())) for s, t in zip(src, tgt)]
    for a, b in zip(together, alone):
        np.testing.assert_allclose(a, b, atol=1e-5)


def test_search_honours_scores_and_each_row_equals_a_plain_run(transformer_ckpt, tmp_path, capsys):
    (tmp_path / "s").write_text("ab cd ef\ncd ab\n")
    (tmp_path / "t").write_text("ab cd ef\ncd ab\n")
    (tmp_path / "g").write_text("1 1 1 S\n1 2 2 S\n1 3 3 S\n2 1 1 S\n2 2 2 S\n")
    common = [
        "align",
        "--model",
        str(transformer_ckpt),
        "--src",
        str(tmp_path / "s"),
        "--tgt",
        str(tmp_path / "t"),
    ]
    common += ["--gold", str(tmp_path / "g"), "--reverse-model", "none"]
    for scores in ("attention", "norm"):
        assert main([*common, "--search", "--scores", scores]) == 0
        rows = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]
        layer0 = next(r for r in rows if r["layer"] == 0 and r["heads"] == "all")
        assert main([*common, "--layer", "0", "--scores", scores, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["aer"] == layer0["aer"]
    assert main([*common, "--search", "--scores", "grad"]) == 2
    assert "reads every layer at once" in capsys.readouterr().err
