"""The alignment contract suite: every translation build of the combination suite (``builds.BUILDS``: torch,
ONNX fp32 and int8, Hugging Face families) aligned in one direction and in two (the build read back as its
own reverse), in every output format of ``attnkit align`` (Pharaoh, NAACL, JSON with probabilities,
blocks), with a null threshold, and through ``/api/align``, keeps the alignment invariants: links inside
the pair's words, the same links in every format, blocks that partition the links and are consistent
with them, soft matrices of probabilities (rows at most 1 in one direction) whose best source per target
word is linked under argmax, and a null threshold that only removes links below it."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnkit.cli.main import main
from tests.contract.builds import BUILDS

SOURCES = ["the cat sits on the mat", "where is the dog", "i like tea"]
TARGETS = ["le chat est assis sur le tapis", "où est le chien", "j'aime le thé"]
NULL = 0.3


def check_rows(rows: list[dict], one_direction: bool, method: str) -> None:
    """The invariants of JSON alignment rows (``AlignmentReport.json_rows``)."""
    assert [r["source_words"] for r in rows] == [s.split() for s in SOURCES]
    assert [r["target_words"] for r in rows] == [t.split() for t in TARGETS]
    for row in rows:
        n_src, n_tgt = len(row["source_words"]), len(row["target_words"])
        links = [tuple(x) for x in row["links"]]
        assert links == sorted(set(links)) and all(0 <= s < n_src and 0 <= t < n_tgt for s, t in links)
        covered = []
        for (s0, s1), (t0, t1) in row["blocks"]:
            assert 0 <= s0 <= s1 < n_src and 0 <= t0 <= t1 < n_tgt
            inside = [(s, t) for s, t in links if s0 <= s <= s1 or t0 <= t <= t1]
            assert inside and all(s0 <= s <= s1 and t0 <= t <= t1 for s, t in inside)  # consistent
            covered += inside
        assert sorted(covered) == links  # every link in exactly one block
        if "probabilities" in row:
            matrix = np.array(row["probabilities"])
            assert matrix.shape == (n_tgt, n_src) and np.isfinite(matrix).all()
            assert (matrix >= 0).all() and (matrix <= 1).all()
            if one_direction:
                assert (matrix.sum(1) <= 1 + 1e-3).all()
            if one_direction and method == "argmax":
                assert all((s, t) in links for t, s in enumerate(matrix.argmax(1)))


@pytest.fixture
def files(tmp_path):
    (tmp_path / "src.txt").write_text("\n".join(SOURCES) + "\n", encoding="utf-8")
    (tmp_path / "tgt.txt").write_text("\n".join(TARGETS) + "\n", encoding="utf-8")
    return ["--src", str(tmp_path / "src.txt"), "--tgt", str(tmp_path / "tgt.txt")]


def _align(argv: list[str], capsys) -> list[str]:
    capsys.readouterr()
    assert main(["align", *argv]) == 0, capsys.readouterr().err
    return capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("direction", ["one", "two"])
@pytest.mark.parametrize("build", BUILDS)
def test_every_build_aligns_in_every_format_with_the_same_links(specs, build, direction, files, capsys):
    spec, backend, int8 = specs(build)
    model = ["--model", spec, "--backend", backend, "--scores", "attention", *(["--int8"] if int8 else [])]
    model += ["--reverse-model", "none" if direction == "one" else spec]
    method = "argmax" if direction == "one" else "intersect"
    rows = [
        json.loads(line) for line in _align([*model, *files, "--format", "json", "--probabilities"], capsys)
    ]
    check_rows(rows, direction == "one", method)
    links = [[tuple(x) for x in r["links"]] for r in rows]
    pharaoh = _align([*model, *files], capsys)
    assert [sorted(tuple(map(int, x.split("-"))) for x in line.split()) for line in pharaoh] == links
    naacl = _align([*model, *files, "--format", "naacl"], capsys)
    by_pair = [
        sorted((int(s) - 1, int(t) - 1) for n, s, t, _ in map(str.split, naacl) if int(n) == i)
        for i in (1, 2, 3)
    ]
    assert by_pair == links
    blocks = _align([*model, *files, "--format", "blocks"], capsys)
    drawn = [
        [[[int(x) for x in side.split("-")] for side in b.split(":")] for b in line.split()]
        for line in blocks
    ]
    assert drawn == [r["blocks"] for r in rows]
    kept = [
        json.loads(line)
        for line in _align([*model, *files, "--format", "json", "--null-threshold", str(NULL)], capsys)
    ]
    check_rows(kept, direction == "one", "threshold")
    for row, before in zip(kept, rows):
        matrix = np.array(before["probabilities"])
        assert set(map(tuple, row["links"])) == {
            (s, t) for s, t in links[rows.index(before)] if matrix[t, s] >= NULL - 1e-4
        }


@pytest.mark.parametrize("build", BUILDS)
def test_the_http_api_aligns_every_build_as_the_command_does(specs, build, files, capsys):
    from starlette.testclient import TestClient

    from attnkit.serve import ModelSet, create_app

    spec, backend, int8 = specs(build)
    models = ModelSet([spec], [], backend=backend, int8=int8, rerank=False)
    client = TestClient(create_app(models), base_url="http://127.0.0.1:8000")
    body = {"sources": SOURCES, "targets": TARGETS, "probabilities": True}
    answer = client.post("/api/align", json=body)
    assert answer.status_code == 200, answer.text
    rows = answer.json()["results"]
    check_rows(rows, True, answer.json()["method"])
    argv = ["--model", spec, "--backend", backend, *(["--int8"] if int8 else []), "--format", "json"]
    assert [r["links"] for r in rows] == [json.loads(x)["links"] for x in _align([*argv, *files], capsys)]
    thresholded = client.post("/api/align", json={**body, "null_threshold": NULL}).json()["results"]
    for row, before in zip(thresholded, rows):
        matrix = np.array(before["probabilities"])
        assert row["links"] == [[s, t] for s, t in before["links"] if matrix[t][s] >= NULL - 1e-4]
    refused = client.post("/api/align", json={**body, "null_threshold": 2})
    assert refused.status_code == 400 and "null_threshold" in refused.json()["error"]


@pytest.fixture(scope="module")
def prior():
    """Lexical tables trained here on the suite's own pairs (the builds know no shipped language pair)."""
    from attnkit.alignment import lexical

    src, tgt = [s.split() for s in SOURCES * 4], [t.split() for t in TARGETS * 4]
    return lexical.Prior(lexical.train(src, tgt), lexical.train(tgt, src), 0.5)


@pytest.mark.parametrize("direction", ["one", "two"])
@pytest.mark.parametrize("build", BUILDS)
def test_every_build_mixes_the_lexical_tables_into_probabilities_it_keeps(built, build, direction, prior):
    from attnkit.alignment.aligner import align_corpus, corpus_matrices

    translator = built(build)
    reverse = None if direction == "one" else translator
    method = "argmax" if direction == "one" else "intersect"
    plain = corpus_matrices(translator, SOURCES, TARGETS, reverse)
    report = align_corpus(translator, SOURCES, TARGETS, reverse=reverse, method=method, matrices=plain,
                          lexical=prior)  # fmt: skip
    check_rows(report.json_rows(probabilities=True), direction == "one", method)
    assert report.settings["lexical"] == 0.5
    for soft, neural, source, target in zip(report.probabilities, plain.forward, SOURCES, TARGETS):
        table = prior.forward.posterior(source.split(), target.split())
        if direction == "one":  # half the neural matrix, half the table's posterior
            np.testing.assert_allclose(soft, 0.5 * neural + 0.5 * table, atol=1e-6)


def test_a_model_without_a_shipped_language_pair_refuses_lexical_in_one_line(specs, files, capsys):
    spec, backend, _ = specs("torch-rnn")
    assert main(["align", "--model", spec, "--backend", backend, *files, "--lexical", "0.5"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no lexical table" in err and "en-fr" in err


def test_the_shipped_default_aligns_with_its_lexical_tables(files, capsys):
    rows = [json.loads(line) for line in _align([*files, "--format", "json", "--probabilities"], capsys)]
    check_rows(rows, False, "intersect")
    off = [json.loads(line) for line in _align([*files, "--format", "json", "--lexical", "0"], capsys)]
    check_rows(off, False, "intersect")
    capsys.readouterr()
    assert main(["align", *files, "--gold", "/dev/null", "--json"]) == 2  # (no links in it: one line)
    assert main(["align", *files, "--lexical", "1.5"]) == 2
    assert "--lexical: expected a weight in [0, 1]" in capsys.readouterr().err
