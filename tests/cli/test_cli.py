"""CLI round trips through main(argv): output formats, exit codes, clear errors."""

import json

import pytest

from attnkit.cli.main import main


def test_translate_json_has_the_documented_keys(translator_ckpt, capsys):
    assert main(["translate", "--model", str(translator_ckpt), "--beam", "2", "--json", "ab cd", ""]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert len(lines) == 2
    first = lines[0]
    assert {"source", "translation", "source_tokens", "target_tokens", "attention"} <= set(first)
    assert len(first["attention"]) == len(first["target_tokens"])
    assert all(len(row) == len(first["source_tokens"]) for row in first["attention"])
    assert lines[1]["translation"] == "" and lines[1]["attention"] == []


def test_evaluate_with_int8_weights_reports_it(translator_ckpt, tmp_path, capsys):
    src, ref = tmp_path / "s.en", tmp_path / "r.fr"
    src.write_text("ab cd\nThe cat sits on the mat.\n")
    ref.write_text("ab cd\nLe chat est assis sur le tapis.\n")
    hyp = tmp_path / "hyp.fr"
    argv = ["evaluate", "--model", str(translator_ckpt), "--src", str(src), "--ref", str(ref), "--int8"]
    assert main([*argv, "--beam", "2", "--json", "--output", str(hyp)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["decoding"]["int8"] is True and report["n_sentences"] == 2
    import sacrebleu

    hyps = hyp.read_text().splitlines()
    expected = sacrebleu.corpus_bleu(hyps, [ref.read_text().splitlines()]).score
    assert len(hyps) == 2 and report["bleu"] == pytest.approx(expected, abs=0.006)


def test_translate_reads_stdin_and_plots(translator_ckpt, tmp_path, monkeypatch, capsys):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("The cat sits on the mat.\n"))
    out = tmp_path / "att.svg"
    assert main(["translate", "--model", str(translator_ckpt), "--plot", str(out)]) == 0
    svg = out.read_text()
    assert "<svg" in svg and "attention weight" in svg


def test_translate_transformer_plot_writes_head_grid(transformer_ckpt, tmp_path):
    out, grid = tmp_path / "att.png", tmp_path / "att-heads.png"
    argv = ["translate", "--model", str(transformer_ckpt), "--beam", "1", "--plot", str(out)]
    assert main([*argv, "ab"]) == 0 and not grid.exists()  # --plot writes its one file only
    assert main([*argv, "--plot-heads", str(grid), "ab"]) == 0
    import matplotlib.image

    for path in (out, grid):
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        height, width = matplotlib.image.imread(path).shape[:2]
        assert height >= 100 and width >= 100
    # the grid has one panel per layer x head: wider than the single heatmap
    assert (
        matplotlib.image.imread(tmp_path / "att-heads.png").shape[1] > matplotlib.image.imread(out).shape[1]
    )


@pytest.mark.parametrize(
    "argv,message",
    [
        (["translate", "--model", "no-such-model", "x"], "no model 'no-such-model'"),
        (["translate", "--beam", "0", "x"], "--beam"),
        (["evaluate", "--src", "/nonexistent.en", "--ref", "/nonexistent.fr"], "no such file"),
        (["train", "/nonexistent.yaml"], "cannot read config"),
    ],
)
def test_errors_exit_2_with_a_message(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_plot_output_format_is_checked(translator_ckpt, tmp_path, capsys):
    assert main(["translate", "--model", str(translator_ckpt), "--plot", str(tmp_path / "a.bmp"), "ab"]) == 2
    assert "valid: pdf, png, svg" in capsys.readouterr().err


def test_evaluate_reports_measured_numbers(translator_ckpt, tmp_path, capsys):
    (tmp_path / "s.en").write_text("ab cd\nhij\n")
    (tmp_path / "r.fr").write_text("ab cd\nhij\n")
    assert (
        main(
            [
                "evaluate",
                "--model",
                str(translator_ckpt),
                "--src",
                str(tmp_path / "s.en"),
                "--ref",
                str(tmp_path / "r.fr"),
                "--beam",
                "2",
                "--json",
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    for key in (
        "bleu",
        "chrf",
        "signature",
        "attention_entropy",
        "sentences_per_second",
        "ms_per_sentence",
        "peak_memory_mb",
        "n_sentences",
    ):
        assert key in report
    assert (
        report["n_sentences"] == 2 and report["peak_memory_mb"] > 50 and "13a" in report["signature"]["bleu"]
    )


def test_align_with_gold_prints_aer(translator_ckpt, tmp_path, capsys):
    (tmp_path / "s.en").write_text("ab cd\n")
    (tmp_path / "t.fr").write_text("ab cd\n")
    (tmp_path / "g.naacl").write_text("1 1 1 S\n1 2 2 P\n")
    assert (
        main(
            [
                "align",
                "--model",
                str(translator_ckpt),
                "--src",
                str(tmp_path / "s.en"),
                "--tgt",
                str(tmp_path / "t.fr"),
            ]
        )
        == 0
    )
    links = capsys.readouterr().out.split()
    assert len(links) == 2 and all("-" in x for x in links)
    predicted = {tuple(int(i) for i in x.split("-")) for x in links}
    sure, possible = {(0, 0)}, {(0, 0), (1, 1)}  # g.naacl, 0-based
    expected = 1 - (len(predicted & sure) + len(predicted & possible)) / (len(predicted) + len(sure))
    assert (
        main(
            [
                "align",
                "--model",
                str(translator_ckpt),
                "--src",
                str(tmp_path / "s.en"),
                "--tgt",
                str(tmp_path / "t.fr"),
                "--gold",
                str(tmp_path / "g.naacl"),
                "--json",
            ]
        )
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["aer"] == pytest.approx(expected, abs=1e-4) and report["n_sentences"] == 1


def test_classify_json_and_html_escapes(classifier_ckpt, tmp_path, capsys):
    page = tmp_path / "a.html"
    review = "Love it <script>alert(1)</script>! Great fit."
    assert main(["classify", "--model", str(classifier_ckpt), "--json", "--html", str(page), review]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"label", "probabilities", "sentences", "sentence_weights", "word_weights"} <= set(out)
    html = page.read_text()
    assert "<script>alert" not in html  # the review is embedded as JSON with every '<' escaped
    data = json.loads(html.split('type="application/json">')[1].split("</script>")[0])
    assert data["view"] == "classify" and data["results"][0]["sentences"] == out["sentences"]


def test_evaluate_classifier_report_keys(classifier_ckpt, tmp_path, capsys):
    data = tmp_path / "d.jsonl"
    data.write_text('{"text": "love it", "label": 5}\n{"text": "bad", "label": 1}\n')
    assert main(["evaluate-classifier", "--model", str(classifier_ckpt), "--data", str(data), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert {"accuracy", "macro_f1", "per_class_f1", "confusion", "n_documents"} <= set(report)
    assert report["n_documents"] == 2


def test_list_reads_the_registry(capsys):
    assert main(["list", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert "additive" in info["scorers"] and "transformer" in info["models"]
    assert info["exports"] == list(info["shipped"])  # every shipped model runs without torch
    assert info["export_variants"]["enfr-rnn"] == ["fp32", "int8"]
    assert info["export_variants"]["enfr-transformer"] == ["int8"]  # shipped int8 only: half the size


def test_quiet_silences_messages_and_progress_bars(translator_ckpt, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ATTNKIT_PROGRESS", "1")
    argv = ["translate", "--model", str(translator_ckpt), "--batch-size", "1", "--beam", "1"]
    sentences = ["ab cd", "cd ab", "ab", "cd", "ab ab", "cd cd"]
    assert main([*argv, "--plot", str(tmp_path / "a.png"), *sentences]) == 0
    err = capsys.readouterr().err
    assert "translating" in err and "[attnkit] attention plot written to" in err
    assert main(["--quiet", *argv, "--plot", str(tmp_path / "b.png"), *sentences]) == 0
    captured = capsys.readouterr()
    # warnings stay (the toy model runs to its length limit and says so); messages and bars go
    assert all(line.startswith("[attnkit] warning: ") for line in captured.err.splitlines())
    assert "translating" not in captured.err and len(captured.out.splitlines()) == 6
    assert main(["-q", "translate", "--model", str(tmp_path / "missing.pt"), "ab"]) == 2
    assert "error" in capsys.readouterr().err  # errors are never silenced
