"""``attnkit align --adapt``: fine-tune on the bitext before aligning (no gold links read)."""

import json

import torch

from attnkit.checkpoint import load_checkpoint
from attnkit.cli.main import main
from attnkit.training.adapt import adapt_translator


def _bitext(tmp_path):
    (tmp_path / "s.en").write_text("ab cd\ncd ab ab\n")
    (tmp_path / "t.fr").write_text("ab cd\ncd ab ab\n")
    (tmp_path / "g.naacl").write_text("1 1 1 S\n1 2 2 S\n2 1 1 S\n2 2 2 P\n2 3 3 P\n")
    return [str(tmp_path / n) for n in ("s.en", "t.fr", "g.naacl")]


def test_adapt_translator_changes_weights_and_keeps_the_vocabulary(translator_ckpt, tmp_path):
    out = adapt_translator(translator_ckpt, ["ab cd", "cd ab"], ["ab cd", "cd ab"], 3, tmp_path, lr=1e-2)
    before, after = load_checkpoint(translator_ckpt), load_checkpoint(out)
    assert after.step == 3 and after.tokenizer == before.tokenizer
    assert after.target_ids == before.target_ids
    changed = [k for k, v in before.model.items() if not torch.equal(v, after.model[k])]
    assert changed, "three updates at lr 1e-2 must move some weights"
    assert (tmp_path / "bitext.src").read_text() == "ab cd\ncd ab\n"


def test_align_adapt_reports_aer_and_names_the_given_models(translator_ckpt, tmp_path, capsys):
    src, tgt, gold = _bitext(tmp_path)
    argv = ["align", "--model", str(translator_ckpt), "--src", src, "--tgt", tgt, "--adapt", "2"]
    argv += ["--reverse-model", str(translator_ckpt), "--symmetrize", "mean", "--method", "intersect"]
    assert main(argv) == 0  # without --gold: the links, one line per pair
    lines = capsys.readouterr().out.splitlines()
    links = [{tuple(map(int, x.split("-"))) for x in line.split()} for line in lines]
    assert main([*argv, "--gold", gold, "--json"]) == 0  # adaptation is seeded: the same links again
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert report["adapt"] == 2 and report["reverse_model"] == str(translator_ckpt)
    sure = [{(0, 0), (1, 1)}, {(0, 0)}]
    possible = [{(0, 0), (1, 1)}, {(0, 0), (1, 1), (2, 2)}]
    hits = sum(len(a & s) + len(a & p) for a, s, p in zip(links, sure, possible))
    expected = 1 - hits / (sum(map(len, links)) + 3)
    assert report["n_sentences"] == 2 and abs(report["aer"] - expected) < 1e-4


def test_align_adapt_rejects_negative_steps(translator_ckpt, tmp_path, capsys):
    src, tgt, _ = _bitext(tmp_path)
    assert main(["align", "--model", str(translator_ckpt), "--src", src, "--tgt", tgt, "--adapt", "-1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--adapt" in err[0]


def test_a_saved_adapted_aligner_gives_the_same_links_later(translator_ckpt, tmp_path, capsys):
    src, tgt, _ = _bitext(tmp_path)
    saved = tmp_path / "aligner"
    argv = ["align", "--model", str(translator_ckpt), "--reverse-model", str(translator_ckpt)]
    argv += ["--src", src, "--tgt", tgt, "--format", "json", "--probabilities"]
    assert main([*argv, "--adapt", "2", "--save", str(saved)]) == 0
    adapted = capsys.readouterr().out
    settings = json.loads((saved / "aligner.json").read_text())
    assert settings["adapt_steps"] == 2 and settings["reverse"] == "reverse.pt"
    assert "optimizer" not in torch.load(saved / "forward.pt", weights_only=True)  # weights only
    reuse = [
        "align",
        "--model",
        str(saved),
        "--src",
        src,
        "--tgt",
        tgt,
        "--format",
        "json",
        "--probabilities",
    ]
    assert main(reuse) == 0
    assert capsys.readouterr().out == adapted  # the reverse model and settings came from the folder


def test_the_shipped_pair_adapted_and_saved_keeps_its_lexical_tables(tmp_path, capsys):
    src, tgt, _ = _bitext(tmp_path)
    saved = tmp_path / "aligner"
    argv = ["align", "--src", src, "--tgt", tgt, "--format", "json", "--probabilities"]
    assert main([*argv, "--adapt", "2", "--save", str(saved)]) == 0  # enfr-rnn with fren-rnn
    adapted = capsys.readouterr().out
    settings = json.loads((saved / "aligner.json").read_text())
    assert settings["lexical"] == 0.5 and settings["languages"] == ["en", "fr"]  # the trial set's choice
    assert main(["align", "--model", str(saved), *argv[1:]]) == 0
    assert capsys.readouterr().out == adapted
    assert main(["align", "--model", str(saved), *argv[1:], "--lexical", "0", "--json"]) == 0
    assert capsys.readouterr().out != adapted  # the tables did change the probabilities


def test_save_refuses_a_used_folder_and_needs_adapt(translator_ckpt, tmp_path, capsys):
    src, tgt, _ = _bitext(tmp_path)
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "mine.txt").write_text("keep")
    base = ["align", "--model", str(translator_ckpt), "--src", src, "--tgt", tgt]
    assert main([*base, "--adapt", "2", "--save", str(tmp_path / "used")]) == 2
    assert "already exists" in capsys.readouterr().err
    assert (tmp_path / "used" / "mine.txt").read_text() == "keep"
    assert main([*base, "--save", str(tmp_path / "new")]) == 2
    assert "goes with --adapt" in capsys.readouterr().err
    (tmp_path / "broken").mkdir()
    for text, said in [
        ("[1, 2]", "aligner.json: expected an object with model, reverse, scores, method, symmetrize; got"),
        ('{"model": 5', "aligner.json:1: not valid JSON (Expecting ',' delimiter)"),
        ('{"model": "m"}', "aligner.json: missing field 'reverse'"),
        (REST % 5, "aligner.json: field 'model': expected the name of a checkpoint file in"),
        (REST % '"/etc/passwd"', "aligner.json: field 'model': expected the name of a checkpoint file in"),
        (REST.replace('"mean"', '"nope"') % '"f.pt"', "field 'symmetrize': \"nope\" is not one of grow-diag"),
        ("[" * 100000 + "]" * 100000, "aligner.json: nested too deeply"),
        (REST[:-1] % '"f.pt"' + ', "lexical": 2}', "field 'lexical': expected a number in [0, 1], got 2"),
        (REST[:-1] % '"f.pt"' + ', "languages": "en"}', "field 'languages': expected [source, target]"),
    ]:  # fmt: skip
        (tmp_path / "broken" / "aligner.json").write_text(text)
        assert main(["align", "--model", str(tmp_path / "broken"), "--src", src, "--tgt", tgt]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and said in err, err


REST = '{"model": %s, "reverse": null, "scores": "attention", "method": "argmax", "symmetrize": "mean"}'


def test_adapt_refuses_a_bad_learning_rate_and_empty_lines_naming_the_file(translator_ckpt, tmp_path, capsys):
    src, tgt, _ = _bitext(tmp_path)
    base = ["align", "--model", str(translator_ckpt), "--src", src, "--tgt", tgt, "--adapt", "2"]
    for lr in ("-1", "nan", "0"):
        assert main([*base, "--adapt-lr", lr]) == 2
        assert "--adapt-lr: expected a learning rate > 0" in capsys.readouterr().err
    (tmp_path / "holes.en").write_text("ab cd\n\n")
    (tmp_path / "holes.fr").write_text("ab cd\ncd ab\n")
    argv = ["align", "--model", str(translator_ckpt), "--src", str(tmp_path / "holes.en")]
    assert main([*argv, "--tgt", str(tmp_path / "holes.fr"), "--adapt", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith(
        "holes.en:2: empty line; --adapt fine-tunes on every pair: remove it"
    )


def test_lexical_on_a_model_without_tables_is_refused_before_fine_tuning(translator_ckpt, tmp_path, capsys):
    src, tgt, _ = _bitext(tmp_path)
    base = ["align", "--model", str(translator_ckpt), "--src", src, "--tgt", tgt, "--lexical", "0.5"]
    assert main([*base, "--adapt", "2", "--save", str(tmp_path / "kept")]) == 2
    assert "no lexical tables for" in capsys.readouterr().err
    assert not (tmp_path / "kept").exists()  # refused before any fine-tuning or writing
    assert main([*base, "--search"]) == 2
    assert "run it without --lexical" in capsys.readouterr().err
