"""``attnkit faithfulness`` and ``attnkit align --reverse-model/--scores`` through main(argv)."""

import json

import pytest

from attnkit.alignment.links import aer, read_naacl
from attnkit.cli.main import main


@pytest.fixture
def reviews(tmp_path):
    rows = [("Love it. Great fit!", 5), ("Terrible fabric. Ripped at once.", 1), ("Ok i guess.", 3)]
    path = tmp_path / "reviews.jsonl"
    path.write_text("\n".join(json.dumps({"text": t, "label": y}) for t, y in rows) + "\n")
    return path


@pytest.fixture
def pairs(tmp_path):
    (tmp_path / "s.en").write_text("ab cd\nef ab cd\n")
    (tmp_path / "t.fr").write_text("ab cd\nef ab\n")
    (tmp_path / "g.naacl").write_text("1 1 1 S\n1 2 2 P\n2 1 1 S\n2 2 2 S\n")
    return [str(tmp_path / n) for n in ("s.en", "t.fr", "g.naacl")]


def test_classifier_report_has_curves_intervals_and_a_plot(classifier_ckpt, reviews, tmp_path, capsys):
    plot, out = tmp_path / "curves.svg", tmp_path / "report.json"
    argv = ["faithfulness", "--model", str(classifier_ckpt), "--data", str(reviews), "--json"]
    extra = ["--fractions", "0,0.5", "--seeds", "2", "--steps", "4", "--plot", str(plot), "--out", str(out)]
    assert main([*argv, *extra]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == json.loads(out.read_text())
    assert report["n_documents"] == 3 and report["fractions"] == [0.0, 0.5]
    for units in ("word", "sentence"):
        for method in report["methods"]:
            comp = report[units][method]["comprehensiveness"]
            assert comp["curve"][0] == {"mean": 0.0, "ci95": [0.0, 0.0]}  # k = 0 erases nothing
            lo, hi = comp["aopc"]["ci95"]
            assert lo - 1e-4 <= comp["aopc"]["mean"] <= hi + 1e-4
    # AOPC over k in {0, 0.5} is half the k = 0.5 point.
    comp = report["word"]["leave_one_out"]["comprehensiveness"]
    assert comp["aopc"]["mean"] == pytest.approx(comp["curve"][1]["mean"] / 2, abs=2e-4)
    assert plot.read_text().lstrip().startswith("<?xml") and "leave_one_out" in plot.read_text()


def test_translator_report_scores_attention_and_saliency(translator_ckpt, pairs, tmp_path, capsys):
    src, tgt, gold = pairs
    out = tmp_path / "r.json"
    argv = ["faithfulness", "--model", str(translator_ckpt), "--src", src, "--tgt", tgt, "--gold", gold]
    assert main([*argv, "--methods", "argmax", "--out", str(out), "--samples", "20"]) == 0
    text = capsys.readouterr().out
    assert "attention" in text and "saliency" in text
    report = json.loads(out.read_text())
    assert set(report["scores"]) == {"attention", "saliency"} and report["n_sentences"] == 2


def test_align_symmetrizes_with_a_reverse_model(translator_ckpt, pairs, capsys):
    src, tgt, gold = pairs
    base = ["align", "--model", str(translator_ckpt), "--src", src, "--tgt", tgt]
    rev = ["--reverse-model", str(translator_ckpt)]
    assert main([*base, "--method", "argmax"]) == 0
    forward = _links(capsys.readouterr().out)
    assert main([*base, *rev, "--method", "argmax", "--symmetrize", "intersection"]) == 0
    both = _links(capsys.readouterr().out)
    assert all(b <= f for b, f in zip(both, forward))  # an intersection keeps only forward links
    assert main([*base, *rev, "--gold", gold, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)  # the Hansards trial set's choices by default
    assert report["symmetrize"] == "mean" and report["method"] == "intersect"
    assert report["reverse_model"] == str(translator_ckpt)
    assert main([*base, *rev, "--symmetrize", "mean", "--method", "intersect"]) == 0
    sure, possible = read_naacl(gold, 2)
    assert report["aer"] == pytest.approx(aer(_links(capsys.readouterr().out), sure, possible).aer, abs=1e-4)


def test_align_with_saliency_scores(translator_ckpt, pairs, capsys):
    src, tgt, _ = pairs
    argv = ["align", "--model", str(translator_ckpt), "--src", src, "--tgt", tgt, "--scores", "saliency"]
    assert main(argv) == 0
    assert len(_links(capsys.readouterr().out)) == 2
    assert main([*argv, "--backend", "onnx"]) == 2
    assert "gradients" in capsys.readouterr().err


def _links(out):
    return [{tuple(int(i) for i in x.split("-")) for x in line.split()} for line in out.splitlines()]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--methods", "magic"], "unknown method 'magic'; valid: attention"),
        (["--fractions", "0,1.5"], "must be in 0..1"),
        (["--fractions", "a,b"], "comma-separated numbers"),
        (["--seeds", "0"], "--seeds must be at least 1"),
        (["--src", "x.en"], "not both"),
    ],
)
def test_bad_classifier_input_is_one_line_and_exit_2(classifier_ckpt, reviews, extra, message, capsys):
    assert main(["faithfulness", "--model", str(classifier_ckpt), "--data", str(reviews), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_data_without_labels_names_the_file_and_line(classifier_ckpt, tmp_path, capsys):
    data = tmp_path / "nolabels.jsonl"
    data.write_text('{"text": "Nice dress."}\n')
    assert main(["faithfulness", "--model", str(classifier_ckpt), "--data", str(data)]) == 2
    err = capsys.readouterr().err
    assert f"{data}:1: missing field 'label'" in err and len(err.strip().splitlines()) == 1


def test_no_input_is_an_error(capsys):
    assert main(["faithfulness"]) == 2
    assert "give --data FILE" in capsys.readouterr().err


def test_align_defaults_to_both_shipped_directions_and_says_when_it_cannot(translator_ckpt, pairs, capsys):
    src, tgt, gold = pairs
    assert main(["align", "--src", src, "--tgt", tgt, "--gold", gold, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)  # enfr-rnn with fren-rnn, grad, mean, intersect (trial)
    assert (report["reverse_model"], report["symmetrize"], report["method"], report["scores"]) == (
        "fren-rnn",
        "mean",
        "intersect",
        "grad",
    )
    assert (
        main(["align", "--model", str(translator_ckpt), "--src", src, "--tgt", tgt, "--json", "--gold", gold])
        == 0
    )
    captured = capsys.readouterr()
    one = json.loads(captured.out)
    assert (one["reverse_model"], one["method"], one["scores"]) == (None, "argmax", "attention")
    assert "has no shipped reverse model; one direction" in captured.err
    assert len(captured.err.strip().splitlines()) == 1
    assert (
        main(["align", "--model", "enfr-transformer", "--src", src, "--tgt", tgt, "--gold", gold, "--json"])
        == 0
    )
    tf = json.loads(capsys.readouterr().out)  # a Transformer with the shipped RNN reverse: the same choice
    assert (tf["reverse_model"], tf["symmetrize"], tf["method"], tf["scores"]) == (
        "fren-rnn",
        "mean",
        "intersect",
        "grad",
    )


def test_an_export_folder_is_one_line_naming_what_faithfulness_reads(tmp_path, capsys):
    from attnkit.cli.main import main as cli
    from attnkit.pretrained import ROOT

    for name, text in (("s.en", "the cat\n"), ("s.fr", "le chat\n"), ("g.naacl", "1 1 1 S\n")):
        (tmp_path / name).write_text(text)
    files = [
        "--src",
        str(tmp_path / "s.en"),
        "--tgt",
        str(tmp_path / "s.fr"),
        "--gold",
        str(tmp_path / "g.naacl"),
    ]
    assert cli(["faithfulness", "--model", str(ROOT / "enfr-rnn" / "onnx"), *files]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is an ONNX export: faithfulness reads gradients of the torch model" in err[0]
    assert "--backend" not in err[0]
