"""Issue 41's bad inputs: each one line and exit 2 (or the right result), and no user file lost. Each
failed before: a traceback, a silent overwrite or a deleted folder."""

from __future__ import annotations

import json
import os
import warnings

import pytest

from attnkit.cli.main import main


def _one_line_exit_2(capsys, argv, needle):
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err


def test_export_hf_keeps_the_files_in_out_and_the_checkpoints_folder(transformer_ckpt, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "mine.txt").write_text("keep")
    _one_line_exit_2(
        capsys, ["export", str(transformer_ckpt), "--format", "hf", "--out", str(out)], "not an export"
    )
    assert (out / "mine.txt").read_text() == "keep"
    home = transformer_ckpt.parent
    before = sorted(p.name for p in home.iterdir())
    argv = ["export", str(transformer_ckpt), "--format", "hf", "--out", str(home)]
    _one_line_exit_2(capsys, argv, "holds the checkpoint being exported")
    assert sorted(p.name for p in home.iterdir()) == before


@pytest.mark.parametrize(
    "content,needle",
    [
        (os.urandom(300), "not UTF-8 text"),
        (b"", "empty; expected JSON lines"),
        (
            b'{"attention": [[0.5, 0.5]], "source_tokens": ["a"], "target_tokens": ["b"]}',
            "must be (T, S) = (1, 1)",
        ),
        (
            b'{"attention": [["x", 1]], "source_tokens": ["a", "b"], "target_tokens": ["b"]}',
            "rows of numbers",
        ),
        (b'{"attention": [], "source_tokens": [], "target_tokens": []}', "not empty"),
        (b'{"attention": [[NaN]], "source_tokens": ["a"], "target_tokens": ["b"]}', "NaN or infinite"),
    ],
)
def test_plot_of_unusable_attention_is_one_line(tmp_path, capsys, content, needle):
    (tmp_path / "in.json").write_bytes(content)
    _one_line_exit_2(capsys, ["plot", str(tmp_path / "in.json"), "--out", str(tmp_path / "x.png")], needle)


def test_plot_never_writes_over_its_input(tmp_path, capsys):
    record = {"attention": [[1.0]], "source_tokens": ["a"], "target_tokens": ["b"]}
    (tmp_path / "in.json").write_text(json.dumps(record))
    _one_line_exit_2(
        capsys, ["plot", str(tmp_path / "in.json"), "--out", str(tmp_path / "in.json")], "is also"
    )
    assert json.loads((tmp_path / "in.json").read_text()) == record


@pytest.mark.parametrize(
    "content,needle",
    [
        (b"\xae\x01\xb0 random", "in.yaml:1: not UTF-8"),
        ("training:\n  lr: 0.1 # été\n".encode("latin-1"), "in.yaml:2"),
    ],
)
def test_train_on_a_config_that_is_not_utf8_names_the_file_and_line(tmp_path, capsys, content, needle):
    (tmp_path / "in.yaml").write_bytes(content)
    _one_line_exit_2(capsys, ["train", str(tmp_path / "in.yaml")], needle)


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan"])
def test_non_finite_numbers_in_a_config_are_refused(capsys, value):
    _one_line_exit_2(
        capsys, ["train", "toy-copy", "--set", f"training.lr={value}"], "training.lr must be a finite number"
    )


@pytest.mark.parametrize("source", ["http://[::1", "http://", "https://host:99999"])
def test_fetch_from_a_malformed_url_is_one_line(monkeypatch, tmp_path, capsys, source):
    from attnkit import store

    monkeypatch.setattr(store, "local", lambda kind, name: None)  # as on an install without the model
    monkeypatch.setenv("ATTNKIT_HOME", str(tmp_path))
    _one_line_exit_2(capsys, ["fetch", "fren-rnn", "--from", source], "not a valid URL")


def test_faithfulness_on_empty_data_or_writing_over_an_input_is_one_line(tmp_path, capsys):
    data = tmp_path / "d.jsonl"
    data.write_text("\n")
    _one_line_exit_2(capsys, ["faithfulness", "--data", str(data)], "no documents")
    _one_line_exit_2(capsys, ["faithfulness", "--data", str(data), "--out", str(data)], "is also --data")
    assert data.read_text() == "\n"


@pytest.mark.parametrize(
    "argv",
    [
        ["translate", "--plot", "{o}/a.png", "--html", "{o}/a.png", "hi"],
        ["translate", "--plot", "{o}/a.png", "--plot-heads", "{o}/a.png", "hi"],
        ["heads", "--src", "{o}/s", "--ref", "{o}/s", "--out", "{o}/r.json", "--html", "{o}/r.json"],
    ],
)
def test_two_outputs_into_one_file_are_refused(tmp_path, capsys, argv):
    (tmp_path / "s").write_text("a\n")
    _one_line_exit_2(capsys, [a.format(o=tmp_path) for a in argv], "give each output its own file")


def test_translate_plot_writes_only_the_file_it_names(tmp_path, capsys):
    (tmp_path / "fig-heads.png").write_bytes(b"mine")
    assert main(["translate", "--plot", str(tmp_path / "fig.png"), "The cat sits on the mat."]) == 0
    assert (tmp_path / "fig-heads.png").read_bytes() == b"mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fig-heads.png", "fig.png"]


def test_a_long_line_is_split_and_rejoined_and_a_huge_one_is_bounded(tmp_path, capsys):
    words = ["the", "cat", "sits", "on", "mat", "and", "dog", "runs"]
    for name, n in (("long", 223), ("huge", 60_000)):
        (tmp_path / f"{name}.en").write_text(" ".join(words[i % 8] for i in range(n)) + "\n")
        (tmp_path / f"{name}.fr").write_text(
            " ".join(["le", "chat", "est", "sur"][i % 4] for i in range(n)) + "\n"
        )
        capsys.readouterr()
        argv = ["align", "--src", str(tmp_path / f"{name}.en"), "--tgt", str(tmp_path / f"{name}.fr")]
        with warnings.catch_warnings():  # shown whatever the run's filters (the CLI logs them to stderr)
            warnings.simplefilter("always")
            assert main(argv) == 0
        captured = capsys.readouterr()
        links = [tuple(map(int, link.split("-"))) for link in captured.out.split()]
        last = max(s for s, _ in links)
        if name == "long":  # split into parts and rejoined (alignment.chunks): its last words are aligned
            assert last >= 210
        else:  # bounded: words past 2,000 on a side get no links, and that is said
            assert 1900 <= last < 2000 and "words past 2000" in captured.err


def test_json_output_never_holds_nan_or_infinity():
    from attnkit.files import json_text

    text = json_text({"a": float("nan"), "b": [1.0, float("inf")], "c": {"d": -float("inf")}})
    assert json.loads(text) == {"a": None, "b": [1.0, None], "c": {"d": None}}


def test_write_errors_name_the_users_path_before_any_work(tmp_path, capsys):
    (tmp_path / "adir").mkdir()
    _one_line_exit_2(capsys, ["translate", "--html", str(tmp_path / "adir"), "hi"], "adir is a folder")
    _one_line_exit_2(capsys, ["translate", "--html", str(tmp_path / "no" / "x.html"), "hi"], "no folder")
    assert capsys.readouterr().out == ""  # nothing was translated


def test_ctrl_c_during_align_adapt_stops_the_whole_command(monkeypatch, tmp_path, capsys):
    """The fine-tuning's trainer catches Ctrl-C to keep its checkpoint and returns 'interrupted': align
    must stop there (exit 130), not run the other direction and print adapt=N with exit 0."""
    from attnkit.training import adapt

    calls = []
    monkeypatch.setattr(adapt, "train", lambda config: calls.append(config) or "interrupted")
    (tmp_path / "s.en").write_text("the cat\n")
    (tmp_path / "s.fr").write_text("le chat\n")
    argv = ["align", "--src", str(tmp_path / "s.en"), "--tgt", str(tmp_path / "s.fr"), "--adapt", "5"]
    assert main(argv) == 130
    assert len(calls) == 1 and capsys.readouterr().out == ""
