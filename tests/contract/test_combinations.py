"""The combination contract suite, generated from the task x backend table (``attnkit.tasks``): every
translation backend that tests can build (torch RNN and Transformer, their ONNX exports fp32 and int8, a
tiny Hugging Face Marian) x every option (greedy and beam, n-best, reranking on and off, layer and
self-attention, every map the table says applies) returns results that keep the invariants of
``attnkit.invariants``; every map the table says does not apply is refused in one line naming the model.
A backend, option or map joins by being in the table. Hypothesis draws the sentences."""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnkit import tasks
from attnkit.api import load_translator
from attnkit.errors import UsageError
from attnkit.explain.translator_maps import with_attention_map
from attnkit.invariants import check_matrix, check_translation
from attnkit.rerank import NoisyChannel
from tests.contract.builds import BUILDS

WORDS = ["the", "cat", "sits", "on", "mat", "dog", "eats", "where", "is", "i", "like", "tea", "a"]
SENTENCES = ["the cat sits on the mat", "where is the dog", "i like tea"]
OPTIONS = [
    {"beam": 1, "n_best": 1, "rerank": False},
    {"beam": 3, "n_best": 1, "rerank": False},
    {"beam": 3, "n_best": 3, "rerank": False},
    {"beam": 3, "n_best": 2, "rerank": True},
]


def _with_options(translator, options, channel):
    translator.reranker = NoisyChannel(channel, 0.3, 0.1) if options["rerank"] else None
    return translator


def _check_result(translator, r, n_best):
    check_translation(r)  # what the constructor checked; a test that fails if it ever stops doing so
    assert len(r.alternatives) <= n_best - 1
    if not r.translation:
        return
    assert r.attention.shape == (len(r.target_tokens), len(r.source_tokens))
    provides = tasks.PROVIDES[translator.kind]
    layers = translator.layer_attention(r)
    assert (layers is not None) == ("layers" in provides and translator.attention_layers > 0)
    if layers is not None:
        assert layers.shape == (translator.attention_layers, translator.attention_heads, *r.attention.shape)
        for layer, head in itertools.product(range(layers.shape[0]), range(layers.shape[1])):
            check_matrix(layers[layer, head], *r.attention.shape, f"layer {layer} head {head}")
    found = translator.self_attention(r)
    if found:
        assert "self_attention" in provides
        t, s = r.attention.shape
        assert found["encoder"].shape[-2:] == (s, s) and found["decoder"].shape[-2:] == (t, t)


@pytest.mark.parametrize("options", OPTIONS, ids=lambda o: "-".join(f"{k}{v}" for k, v in o.items()))
@pytest.mark.parametrize("build", BUILDS)
def test_every_backend_and_option_keeps_the_invariants(built, build, options):
    translator = built(build)
    if options["rerank"] and not translator.can_rerank:
        with pytest.raises(UsageError, match="reranking applies to attnkit's translators"):
            load_translator(translator.path, rerank=str(translator.path))
        return
    channel = built("torch-rnn")  # an untrained model of unknown languages: accepted as a channel
    _with_options(translator, options, channel)
    try:
        results = translator.translate(SENTENCES, beam=options["beam"], n_best=options["n_best"])
    finally:
        translator.reranker = None
    for r in results:
        _check_result(translator, r, options["n_best"])
        assert (r.rerank is not None) == (options["rerank"] and options["beam"] > 1)


@pytest.mark.parametrize("method", tasks.MAPS)
@pytest.mark.parametrize("build", BUILDS)
def test_every_map_that_applies_keeps_the_invariants_and_the_rest_are_refused(built, build, method):
    translator = built(build)
    if not tasks.applies(method, translator.kind):
        described = re.escape(tasks.with_article(tasks.DESCRIPTION[translator.kind]))
        with pytest.raises(UsageError, match=f"{method} does not apply to .*, {described}"):
            with_attention_map(translator, translator.translate(SENTENCES[:1], beam=1), method)
        return
    translator.reranker = NoisyChannel(built("torch-rnn"), 0.3, 0.1) if translator.can_rerank else None
    try:
        results = translator.translate(SENTENCES[:2], beam=3, n_best=2)
    finally:
        translator.reranker = None
    for r in with_attention_map(translator, results, method):
        assert r.attention_map == method
        _check_result(translator, r, 2)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=12), beam=st.integers(1, 4))
def test_drawn_sentences_keep_the_invariants_on_the_reranking_transformer(built, words, beam):
    translator = _with_options(built("torch-transformer"), {"rerank": True}, built("torch-rnn"))
    try:
        [r] = translator.translate([" ".join(words)], beam=beam, n_best=beam)
    finally:
        translator.reranker = None
    _check_result(translator, r, beam)
    [mapped] = with_attention_map(translator, [r], "grad")
    np.testing.assert_allclose(mapped.attention.sum(1), 1.0, atol=1e-3)


def test_the_table_names_importable_classes_and_every_backend_declares_a_kind_it_provides(built):
    from attnkit.names import resolve

    for task in tasks.TABLE.values():
        for target in [task.result, task.base, *task.backends.values(), task.exporter, task.trainer]:
            if target:
                assert resolve(target) is not None, target
    for build in BUILDS:
        translator = built(build)
        assert translator.kind in tasks.PROVIDES and translator.backend in tasks.TABLE["translation"].backends
    assert set(tasks.NEEDS) >= set(tasks.MAPS)


SURFACES = ["cli-json", "cli-html", "cli-plot", "http"]


def _surface_rows(surface, spec, backend, int8, options, tmp_path, capsys):
    """What a surface answers for SENTENCES, as JSON rows (``Translation.to_json`` + layers)."""
    from attnkit.cli.main import main

    if surface == "http":
        from starlette.testclient import TestClient

        from attnkit.serve import ModelSet, create_app

        models = ModelSet([spec], [], backend=backend, int8=int8, rerank=False)
        body = {"sentences": SENTENCES, "beam": 3, "n_best": 2, "layers": True, **options}
        answer = TestClient(create_app(models), base_url="http://127.0.0.1:8000").post(
            "/api/translate", json=body
        )
        assert answer.status_code == 200, answer.text
        return answer.json()["results"]
    argv = ["translate", "--model", spec, "--backend", backend, "--beam", "3", *(["--int8"] if int8 else [])]
    argv += [f"--{k.replace('_', '-')}={v}" for k, v in options.items()]
    out = tmp_path / {"cli-json": "x", "cli-html": "page.html", "cli-plot": "plot.png"}[surface]
    argv += {"cli-json": ["--json"], "cli-html": ["--html", str(out)], "cli-plot": ["--plot", str(out)]}[
        surface
    ]
    capsys.readouterr()
    assert main([*argv, *SENTENCES]) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out.strip().splitlines()
    if surface == "cli-json":
        return [json.loads(line) for line in printed]
    if surface == "cli-plot":
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 2000
        return []
    page = out.read_text(encoding="utf-8")
    payload = page.split('<script id="attnkit-data" type="application/json">', 1)[1].split("</script>", 1)[0]
    return json.loads(payload)["results"]


def _check_row(row, translator):
    t, s = len(row["target_tokens"]), len(row["source_tokens"])
    if not row["translation"]:
        return
    check_matrix(np.array(row["attention"]), t, s, f"{row['source']!r}: attention")
    for k, (tokens, matrix) in enumerate(
        zip(row.get("alternative_tokens", []), row.get("alternative_attention", []))
    ):
        check_matrix(np.array(matrix), len(tokens), s, f"alternative {k + 1}")
    if "layer_attention" in row:
        layers = np.array(row["layer_attention"])
        assert layers.shape == (translator.attention_layers, translator.attention_heads, t, s)
        for layer, head in itertools.product(range(layers.shape[0]), range(layers.shape[1])):
            check_matrix(layers[layer, head], t, s, f"layer {layer} head {head}")


@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize("build", BUILDS)
def test_every_surface_of_every_backend_answers_results_that_keep_the_invariants(
    specs, built, build, surface, tmp_path, capsys
):
    spec, backend, int8 = specs(build)
    translator = built(build)
    maps = [m for m in tasks.MAPS if m != "attention" and tasks.applies(m, translator.kind)]
    choices = [{}] + [{"attention_map": m} for m in maps[:1]]  # the first derived map that applies
    for options in choices:
        rows = _surface_rows(surface, spec, backend, int8, options, tmp_path, capsys)
        assert surface == "cli-plot" or len(rows) == len(SENTENCES)
        for row in rows:
            _check_row(row, translator)
            assert row.get("attention_map", "attention") == options.get("attention_map", "attention")
