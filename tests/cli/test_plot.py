"""``attnkit plot``: heatmaps from saved ``translate --json`` lines and .npz files; bad input is one line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnkit.cli.main import main


def _record(tokens: list[str]) -> dict:
    weights = np.eye(3)[[0, 2, 1]] * 0.8 + 0.2 / 3
    return {"source_tokens": ["le", "<&>", "</s>"], "target_tokens": tokens, "attention": weights.tolist()}


def test_plot_from_translate_json_lines_writes_an_svg_with_the_tokens(tmp_path):
    lines = tmp_path / "t.jsonl"
    lines.write_text(
        json.dumps(_record(["a", "b", "</s>"])) + "\n" + json.dumps(_record(["c", "zz9", "</s>"]))
    )
    out = tmp_path / "second.svg"
    assert main(["plot", str(lines), "--index", "1", "--out", str(out)]) == 0
    svg = out.read_text()
    assert svg.startswith("<?xml") and "zz9" in svg and "&lt;&amp;&gt;" in svg  # text escaped in SVG
    assert "<&>" not in svg


def test_plot_from_npz_writes_a_png(tmp_path):
    rec = _record(["a", "b", "</s>"])
    path = tmp_path / "att.npz"
    np.savez(path, **{k: np.asarray(v) for k, v in rec.items()})
    out = tmp_path / "att.png"
    assert main(["plot", str(path), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "content,message",
    [
        ("{not json", "t.jsonl:1: invalid JSON"),
        ('{"attention": [[1.0]], "source_tokens": ["a"]}', "t.jsonl:1: record has no 'target_tokens'"),
    ],
)
def test_plot_bad_input_is_one_line_and_exit_2(tmp_path, capsys, content, message):
    (tmp_path / "t.jsonl").write_text(content + "\n")
    assert main(["plot", str(tmp_path / "t.jsonl"), "--out", str(tmp_path / "x.png")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert not (tmp_path / "x.png").exists()
