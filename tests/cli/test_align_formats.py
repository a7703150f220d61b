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


def test_blocks_are_the_smallest_phrase_pairs_the_links_allow():
    from attnkit.alignment.links import blocks

    # "not" -> "ne ... pas": one source word, two non-adjacent target words, with "is" between
    links = {(0, 0), (1, 2), (1, 4), (2, 3), (3, 5)}
    assert blocks(links) == [((0, 0), (0, 0)), ((1, 2), (2, 4)), ((3, 3), (5, 5))]
    assert blocks(set()) == []
    assert blocks({(2, 1), (0, 1)}) == [((0, 2), (1, 1))]  # a span covers what lies between


def test_null_threshold_drops_weak_links_and_blocks_follow_the_links(pair, capsys):
    rows = [json.loads(x) for x in _run([*pair, "--format", "json", "--probabilities"], capsys)]
    weakest = min(row["probabilities"][t][s] for row in rows for s, t in row["links"])
    floor = weakest + 1e-4
    kept = [json.loads(x) for x in _run([*pair, "--format", "json", "--probabilities", "--null-threshold",
                                         str(floor)], capsys)]  # fmt: skip
    for before, after in zip(rows, kept):
        strong = [link for link in before["links"] if before["probabilities"][link[1]][link[0]] >= floor]
        assert after["links"] == strong
    assert sum(map(len, (r["links"] for r in kept))) < sum(map(len, (r["links"] for r in rows)))
    lines = _run([*pair, "--format", "blocks"], capsys)
    for line, row in zip(lines, rows):
        spans = [[list(map(int, side.split("-"))) for side in block.split(":")] for block in line.split()]
        assert spans == row["blocks"]
        for s, t in row["links"]:  # every link lies in exactly one block
            assert sum(a <= s <= b and c <= t <= d for (a, b), (c, d) in spans) == 1


@pytest.mark.parametrize("value", ["-0.1", "1.5", "nan"])
def test_null_threshold_outside_0_1_is_one_line(pair, capsys, value):
    assert main(["align", *pair, "--null-threshold", value]) == 2
    assert "--null-threshold: expected a probability in [0, 1]" in capsys.readouterr().err


def test_empty_lines_keep_their_place_with_no_links(tmp_path, capsys):
    (tmp_path / "s").write_text("the cat .\n\nthe dog .\n")
    (tmp_path / "t").write_text("le chat .\nun chat\nle chien .\n")  # a pair with one side empty
    lines = _run(["--src", str(tmp_path / "s"), "--tgt", str(tmp_path / "t"), "--model", "enfr-rnn"], capsys)
    assert len(lines) == 3 and lines[1] == "" and lines[0] and lines[2]


def test_int8_reads_attention_from_the_int8_graphs_and_refuses_torch_scores(pair, capsys):
    """--int8 aligns on the int8 ONNX graphs (the shipped reverse has fp32 graphs only: it runs those);
    scores that read the torch model, or --adapt, are refused in one line before any work."""
    links = _run([*pair, "--int8", "--scores", "attention"], capsys)
    assert len(links) == 2 and all(links)
    for extra in (["--scores", "grad"], ["--scores", "attention", "--adapt", "5"]):
        assert main(["align", *pair, "--int8", *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "--int8 runs ONNX int8 graphs, which give attention only" in err


def test_a_model_that_is_not_there_is_the_only_line(pair, tmp_path, capsys):
    """No note about its (missing) reverse model comes before the error that the model is not there."""
    argv = [*pair[:4], "--model", str(tmp_path / "nothing")]
    assert main(["align", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no model" in err[0]
