"""The combination contract suite for the other tasks of the table (``attnkit.tasks``): classification on
every backend of its row (torch HAN, its ONNX export fp32 and int8, a tiny Hugging Face BERT) and captioning
on every backend of its row (torch, ONNX), each through every surface (Python API, CLI --json, HTTP API)
with its options (prior correction, beam and n-best), keeps the invariants of ``attnkit.invariants``."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from attnkit import tasks
from attnkit.api import load_captioner, load_classifier
from attnkit.cli.main import main
from attnkit.invariants import check_caption, check_classification
from attnkit.results import Classification

DOCUMENTS = ["Love this dress. It fits well!", "Runs small. Returned it.", "ok"]
CLASSIFY_BUILDS = ["torch", "onnx", "onnx8", "hf", "shipped"]  # shipped: reviews-han, the default
CAPTION_BUILDS = ["torch", "onnx"]
SURFACES = ["python", "cli-json", "http"]


def test_the_builds_cover_every_backend_of_the_table():
    assert {b.rstrip("8") for b in CLASSIFY_BUILDS} - {"shipped"} == set(
        tasks.TABLE["classification"].backends
    )
    assert set(CAPTION_BUILDS) == set(tasks.TABLE["captioning"].backends)


@pytest.fixture(scope="module")
def classify_spec(classifier_ckpt, tmp_path_factory):
    cache: dict[str, tuple[str, str, bool]] = {}

    def get(build: str) -> tuple[str, str, bool]:
        if build not in cache:
            if build == "hf":
                pytest.importorskip("transformers")
                from tests.hf import tiny

                cache[build] = (
                    str(tiny.bert(tmp_path_factory.mktemp("combo-bert"), steps=20)),
                    "auto",
                    False,
                )
            elif build == "torch":
                cache[build] = (str(classifier_ckpt), "torch", False)
            elif build == "shipped":
                cache[build] = ("reviews-han", "auto", False)
            else:
                from attnkit.export import export

                folder = tmp_path_factory.mktemp(f"combo-han-{build}") / "onnx"
                export(str(classifier_ckpt), folder, int8=build == "onnx8")
                cache[build] = (str(folder), "onnx", build == "onnx8")
        return cache[build]

    return get


def _classify_rows(surface, spec, backend, int8, tau, tmp_path, capsys):
    if surface == "python":
        model = load_classifier(spec, backend=backend, int8=int8, prior_correction=tau)
        return [r.to_json() for r in model.classify(DOCUMENTS)]
    if surface == "http":
        from starlette.testclient import TestClient

        from attnkit.serve import ModelSet, create_app

        app = create_app(ModelSet([], [spec], backend=backend, int8=int8))
        body = {"documents": DOCUMENTS, **({"prior_correction": tau} if tau is not None else {})}
        answer = TestClient(app, base_url="http://127.0.0.1:8000").post("/api/classify", json=body)
        assert answer.status_code == 200, answer.text
        return answer.json()["results"]
    argv = ["classify", "--model", spec, "--backend", backend, "--json", *(["--int8"] if int8 else [])]
    argv += ["--prior-correction", str(tau)] if tau is not None else []
    capsys.readouterr()
    assert main([*argv, *DOCUMENTS]) == 0, capsys.readouterr().err
    return [json.loads(line) for line in capsys.readouterr().out.strip().splitlines()]


@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize("build", CLASSIFY_BUILDS)
def test_every_classifier_backend_and_surface_keeps_the_invariants(
    classify_spec, build, surface, tmp_path, capsys
):
    spec, backend, int8 = classify_spec(build)
    # prior correction needs a HAN's training class weights (the tiny test HAN keeps none)
    for tau in {"hf": [None], "shipped": [None, 0.0, 1.0]}.get(build, [None, 0.0]):
        rows = _classify_rows(surface, spec, backend, int8, tau, tmp_path, capsys)
        assert len(rows) == len(DOCUMENTS)
        for row in rows:
            fields = {k: row[k] for k in ("text", "label", "probabilities", "sentences")}
            result = Classification(  # the constructor checks the invariants of what the surface answered
                **fields, sentence_weights=row["sentence_weights"], word_weights=row["word_weights"]
            )
            check_classification(result)


@pytest.fixture(scope="module")
def digit_images(tmp_path_factory):
    from PIL import Image

    from attnkit.datasets.digits import digit_strings

    folder = tmp_path_factory.mktemp("combo-digits")
    paths = []
    for k, item in enumerate(digit_strings("test", 2)):
        paths.append(folder / f"d{k}.png")
        Image.fromarray(item.image).save(paths[-1])
    return paths


@pytest.fixture(scope="module")
def caption_spec(captioner_ckpt, tmp_path_factory):
    from attnkit.export import export

    folder = tmp_path_factory.mktemp("combo-captioner") / "onnx"
    export(str(captioner_ckpt), folder)
    return {"torch": (str(captioner_ckpt), "torch"), "onnx": (str(folder), "onnx")}


def _check_caption_row(row, n_best):
    attention, eos = np.array(row["attention"]), np.array(row["eos_attention"])
    assert attention.shape == (len(row["tokens"]), *row["grid"]) and eos.shape == tuple(row["grid"])
    np.testing.assert_allclose(attention.reshape(len(row["tokens"]), -1).sum(1), 1.0, atol=2e-3)
    assert len(row.get("n_best", [])) <= n_best - 1


@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize("build", CAPTION_BUILDS)
def test_every_captioner_backend_and_surface_keeps_the_invariants(
    caption_spec, digit_images, build, surface, capsys
):
    spec, backend = caption_spec[build]
    for beam, n_best in ((1, 1), (3, 2)):
        if surface == "python":
            model = load_captioner(spec, backend=backend)
            for r in model.caption_files([str(p) for p in digit_images], beam_size=beam, n_best=n_best):
                check_caption(r)
                _check_caption_row(r.to_json(), n_best)
            continue
        if surface == "http":
            from starlette.testclient import TestClient

            from attnkit.serve import ModelSet, create_app

            app = create_app(ModelSet([], [], backend=backend, captioners=[spec]))
            images = [base64.b64encode(p.read_bytes()).decode() for p in digit_images]
            body = {"images": images, "beam": beam, "n_best": n_best}
            answer = TestClient(app, base_url="http://127.0.0.1:8000").post("/api/caption", json=body)
            assert answer.status_code == 200, answer.text
            rows = answer.json()["results"]
        else:
            argv = ["caption", *map(str, digit_images), "--model", spec, "--backend", backend, "--json"]
            capsys.readouterr()
            assert main([*argv, "--beam", str(beam), "--n-best", str(n_best)]) == 0
            rows = [json.loads(line) for line in capsys.readouterr().out.strip().splitlines()]
        assert len(rows) == len(digit_images)
        for row in rows:
            _check_caption_row(row, n_best)
