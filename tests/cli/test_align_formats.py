"""Issue 44's aligner outputs: Pharaoh (default), NAACL and JSON formats of the same links, and the soft
matrix the links are read from (``--probabilities``), for one direction and both."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnkit.cli.main import main

EN = ["the cat sits on the mat .", "where is the dog ?"]
FR = ["le chat est assis sur le tapis .", "où est le chien ?"]


@pytest.fixture
def pair(tmp_path):
    (tmp_path / "s.en").write_text("\n".join(EN) + "\n")
    (tmp_path / "t.fr").write_text("\n".join(FR) + "\n")
    return ["--src", str(tmp_path / "s.en"), "--tgt", str(tmp_path / "t.fr"), "--model", "enfr-rnn"]


def _run(argv, capsys):
    assert main(["align", *argv]) == 0
    return capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("reverse", [["--reverse-model", "none", "--scores", "attention"], []])
def test_the_three_formats_carry_the_same_links_and_the_matrix_they_came_from(pair, capsys, reverse):
    pharaoh = _run([*pair, *reverse], capsys)
    naacl = _run([*pair, *reverse, "--format", "naacl"], capsys)
    rows = [
        json.loads(line) for line in _run([*pair, *reverse, "--format", "json", "--probabilities"], capsys)
    ]
    assert len(pharaoh) == len(rows) == 2
    for i, (line, row) in enumerate(zip(pharaoh, rows), 1):
        links = sorted(tuple(map(int, x.split("-"))) for x in line.split())
        assert links == [tuple(x) for x in row["links"]]
        assert (
            sorted((int(s) - 1, int(t) - 1) for n, s, t, _ in map(str.split, naacl) if int(n) == i) == links
        )
        matrix = np.array(row["probabilities"])
        assert matrix.shape == (len(row["target_words"]), len(row["source_words"]))
        assert (matrix >= 0).all() and (matrix <= 1.0).all()
        if reverse:  # one direction: rows are (at most) distributions; argmax links each target's best source
            assert (matrix.sum(1) <= 1.0 + 1e-3).all()
            assert all((s, t) in links for t, s in enumerate(matrix.argmax(1)))


def test_probabilities_need_the_json_format(pair, capsys):
    assert main(["align", *pair, "--probabilities"]) == 2
    assert "--probabilities: the matrices are written with --format json" in capsys.readouterr().err


def test_the_probabilities_are_drawn_with_the_links_outlined(pair, tmp_path, capsys):
    picture = tmp_path / "probabilities.png"
    assert main(["align", *pair, "--plot", str(picture)]) == 0
    assert picture.read_bytes().startswith(b"\x89PNG") and "drawn to" in capsys.readouterr().err
    assert main(["align", *pair, "--plot", str(tmp_path / "x.bmp")]) == 2
    assert "unknown image format 'bmp'" in capsys.readouterr().err
    assert main(["align", *pair, "--plot", pair[1]]) == 2  # the source file itself: refused, kept
    assert (tmp_path / "s.en").read_text().startswith("the cat")
