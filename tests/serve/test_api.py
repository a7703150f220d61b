"""The explorer's JSON API through Starlette's TestClient: keys, errors and limits, micro-batching."""

from __future__ import annotations

import asyncio
import json
import warnings

import httpx
import numpy as np
import pytest

with warnings.catch_warnings():  # starlette 1.x prefers httpx2 for its TestClient; httpx works the same
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from attnkit.api import load_classifier, load_translator
from attnkit.serve.app import MAX_BODY

CAT = "The cat sits on the mat."


@pytest.fixture(scope="module")
def client(app):
    return TestClient(app, base_url="http://127.0.0.1:8000")


def test_translate_answers_what_the_cli_prints(client):
    answer = client.post("/api/translate", json={"sentences": [CAT], "beam": 5, "n_best": 2})
    assert answer.status_code == 200
    [result] = answer.json()["results"]
    expected = load_translator("enfr-rnn").translate([CAT], beam=5, n_best=2)[0].to_json()
    alternatives = {k: expected.pop(k) for k in ("alternative_tokens", "alternative_attention")}
    assert result == json.loads(json.dumps(expected))  # the n-best's own maps only when asked for
    body = {"sentences": [CAT], "beam": 5, "n_best": 2, "alternative_attention": True}
    asked = client.post("/api/translate", json=body).json()["results"][0]
    assert asked["alternative_tokens"] == alternatives["alternative_tokens"]
    np.testing.assert_allclose(
        asked["alternative_attention"][0], alternatives["alternative_attention"][0], atol=1e-5
    )
    assert set(result) >= {
        "source_tokens",
        "target_tokens",
        "attention",
        "alternatives",
        "alternative_scores",
    }


def test_transformer_results_carry_every_layer_and_head(client, models):
    name = list(models.translators)[1]
    answer = client.post(
        "/api/translate", json={"sentences": ["ab cd"], "model": name, "layers": True}
    ).json()
    result = answer["results"][0]
    layers = result["layer_attention"]
    assert len(layers) == 2 and len(layers[0]) == 2  # the tiny Transformer: 2 layers x 2 heads
    assert len(layers[0][0]) == len(result["target_tokens"]) and len(layers[0][0][0]) == len(
        result["source_tokens"]
    )
    last = layers[-1]  # the decoding attention is the last layer's head mean
    mean = [
        [sum(h[t][s] for h in last) / len(last) for s in range(len(last[0][0]))] for t in range(len(last[0]))
    ]
    np.testing.assert_allclose(mean, result["attention"], atol=2e-5)


def test_classify_and_prior_correction(client):
    text = "Runs small. Returned it."
    plain = client.post("/api/classify", json={"documents": [text]}).json()
    expected = load_classifier("reviews-han").classify([text])[0].to_json()
    assert plain["results"][0] == json.loads(json.dumps(expected))
    for tau in (0.0, 1.0):
        shifted = client.post("/api/classify", json={"documents": [text], "prior_correction": tau}).json()
        direct = load_classifier("reviews-han", prior_correction=tau).classify([text])[0]
        assert shifted["prior"]["prior_correction"] == tau
        assert shifted["results"][0]["label"] == direct.label
        assert shifted["results"][0]["probabilities"] == pytest.approx(direct.probabilities, abs=1e-4)


def test_align_with_gold_scores_and_colours_links(client):
    body = {"sources": ["the cat"], "targets": ["le chat"], "gold": "1 1 1 S\n1 2 2 P", "method": "argmax"}
    answer = client.post("/api/align", json=body).json()
    [row] = answer["results"]
    assert row["source_words"] == ["the", "cat"] and row["target_words"] == ["le", "chat"]
    assert len(row["status"]) == len(row["links"])
    assert set(row["status"]) <= {"sure", "possible", "wrong"}
    assert 0.0 <= answer["score"]["aer"] <= 1.0 and set(answer["score"]) == {"aer", "precision", "recall"}


def test_models_and_health(client, models):
    info = client.get("/api/models").json()
    assert [t["name"] for t in info["translators"]] == list(models.translators)
    assert info["translators"][0]["backend"] == "onnx" and info["translators"][1]["layers"] == 2
    assert info["classifiers"][0]["labels"] == ["1", "2", "3", "4", "5"]
    assert client.get("/api/health").json()["status"] == "ok"


BAD = [
    ("/api/translate", {}, 400, "field 'sentences' is missing"),
    ("/api/translate", {"sentences": "one"}, 400, "must be a list of strings"),
    ("/api/translate", {"sentences": [1]}, 400, "field 'sentences': item 0 must be a string"),
    ("/api/translate", {"sentences": ["a"] * 65}, 422, "at most 64"),
    ("/api/translate", {"sentences": ["a"], "beam": 0}, 400, "field 'beam'"),
    ("/api/translate", {"sentences": ["a"], "beam": "5"}, 400, "field 'beam'"),
    ("/api/translate", {"sentences": ["a"], "beam": 2, "n_best": 3}, 400, "field 'n_best'"),
    ("/api/translate", {"sentences": ["a"], "layers": "yes"}, 400, "field 'layers'"),
    ("/api/translate", {"sentences": ["a"], "model": "../../etc/passwd"}, 422, "unknown translator"),
    ("/api/translate", {"sentences": ["a \ud800"]}, 400, "item 0 is not valid Unicode"),
    ("/api/translate", {"sentences": ["ok", "a " * 101]}, 422, "item 1 has 101 words; at most 100"),
    ("/api/translate", {"sentences": ["x" * 1001]}, 422, "item 0 has 1001 characters"),
    ("/api/translate", {"sentences": ["w " * 100] * 5, "beam": 10}, 422, "request too costly"),
    ("/api/translate", {"sentences": ["a"], "attention_map": "best"}, 400, "field 'attention_map'"),
    ("/api/translate", {"sentences": ["a"], "attention_map": "rollout"}, 400, "valid: attention, norm, grad"),
    ("/api/translate", {"sentences": ["a"], "attention_map": ["grad"]}, 400, "field 'attention_map'"),
    ("/api/classify", {"documents": ["ok"], "model": "enfr-rnn"}, 422, "unknown classifier"),
    ("/api/classify", {"documents": ["  "]}, 400, "is empty"),
    ("/api/classify", {"documents": ["\udfff"]}, 400, "not valid Unicode"),
    ("/api/classify", {"documents": ["ok"], "prior_correction": 2}, 400, "field 'prior_correction'"),
    ("/api/align", {"sources": ["a"], "targets": ["a", "b"]}, 400, "differ in length"),
    ("/api/align", {"sources": ["a"], "targets": ["b"], "method": "best"}, 400, "field 'method'"),
    ("/api/align", {"sources": ["a"], "targets": ["b"], "gold": "1 x 1"}, 422, "field 'gold':1"),
    ("/api/align", {"sources": ["a b"], "targets": ["c"], "gold": "1 3 1"}, 422, "outside sentence 1"),
    ("/api/align", {"sources": ["a \ud800"], "targets": ["c"]}, 400, "not valid Unicode"),
    ("/api/align", {"sources": [" ".join(["zqxjkv"] * 99)], "targets": ["c"]}, 422, "reads at most 200"),
    ("/api/caption", {}, 400, "field 'images' must be a non-empty list"),
    ("/api/caption", {"images": ["not base64!"]}, 400, "item 0 is not base64"),
    ("/api/caption", {"images": [1]}, 400, "item 0 must be a string"),
    ("/api/caption", {"images": ["aGVsbG8="]}, 422, "field 'images': item 0: not an image"),
    ("/api/caption", {"images": ["aGVsbG8="] * 9}, 422, "at most 8"),
    ("/api/caption", {"images": ["aGVsbG8="], "beam": 11}, 400, "field 'beam'"),
    ("/api/caption", {"images": ["aGVsbG8="], "model": "digits"}, 422, "unknown captioner"),
    # issue 41: each was a 500, a silent acceptance or light work
    ("/api/align", {"sources": ["a"], "targets": ["b"], "gold": "1 \u00b2 1 S"}, 422, "field 'gold':1"),
    ("/api/translate", {"sentences": ["a"], "beem": 3}, 400, 'unknown field "beem"; valid: sentences'),
    ("/api/classify", {"documents": ["ok"], "tau": 1}, 400, 'unknown field "tau"'),
    ("/api/translate", {"sentences": ["x" * 1000] * 39}, 422, "request too costly"),
]


@pytest.mark.parametrize(("path", "body", "status", "message"), BAD)
def test_bad_requests_get_a_4xx_json_error_naming_the_field(client, path, body, status, message):
    # json.dumps escapes lone surrogates ("\\ud800"), as a browser's JSON.stringify does
    answer = client.post(path, content=json.dumps(body), headers={"Content-Type": "application/json"})
    assert answer.status_code == status, answer.json()
    assert message in answer.json()["error"]


JSON = {"Content-Type": "application/json"}


def test_body_limits_and_bad_json(client):
    big = client.post("/api/translate", content=b'{"sentences": ["' + b"a" * MAX_BODY + b'"]}', headers=JSON)
    assert big.status_code == 413 and "over the limit" in big.json()["error"]
    broken = client.post("/api/translate", content=b"{not json", headers=JSON)
    assert broken.status_code == 400 and "not valid JSON" in broken.json()["error"]
    listed = client.post("/api/translate", content=b"[1, 2]", headers=JSON)
    assert listed.status_code == 400 and "JSON object" in listed.json()["error"]
    deep = client.post("/api/translate", content=b"[" * 50_000 + b"]" * 50_000, headers=JSON)
    assert deep.status_code in (400, 413) and "error" in deep.json()
    deep = client.post(
        "/api/translate", content=b'{"a":' + b"[" * 60_000 + b"]" * 60_000 + b"}", headers=JSON
    )
    assert deep.status_code in (400, 413)
    latin = client.post("/api/translate", content=b'{"sentences": ["caf\xe9"]}', headers=JSON)
    assert latin.status_code == 400 and "UTF-8" in latin.json()["error"]
    assert client.get("/api/nothing").status_code == 404 and "error" in client.get("/api/nothing").json()
    wrong = client.get("/api/translate")
    assert wrong.status_code == 405 and wrong.headers["allow"] == "POST"


def test_only_json_bodies_from_allowed_hosts_and_origins(client):
    body = json.dumps({"sentences": ["Good night!"]})
    for media in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""):
        answer = client.post("/api/translate", content=body, headers={"Content-Type": media})
        assert answer.status_code == 415 and "must be JSON" in answer.json()["error"]
    rebound = client.get("/api/models", headers={"Host": "attacker.example:8000"})
    assert rebound.status_code == 400 and "attacker.example" in rebound.json()["error"]
    assert client.get("/", headers={"Host": "attacker.example"}).status_code == 400
    other = client.post("/api/translate", content=body, headers={**JSON, "Origin": "http://evil.example"})
    assert other.status_code == 403
    same = client.post("/api/translate", content=body, headers={**JSON, "Origin": "http://127.0.0.1:8000"})
    assert same.status_code == 200
    for host in ("localhost:8000", "[::1]:8000", "127.0.0.1"):
        assert client.get("/api/health", headers={"Host": host}).status_code == 200


def test_errors_never_echo_a_huge_input(client):
    answer = client.post("/api/translate", json={"sentences": ["a"], "model": "m" * 200_000})
    assert answer.status_code == 422 and len(answer.text) < 400


def test_models_report_the_limits_the_server_enforces(client):
    info = client.get("/api/models").json()
    limits = info["limits"]
    assert limits["max_items"] == 64 and limits["max_words"] == 100 and limits["max_beam"] == 10
    over = {"sentences": ["a " * (limits["max_words"] + 1)]}
    assert client.post("/api/translate", json=over).status_code == 422
    assert info["classifier_reads"] == {"max_sentences": 30, "max_words_per_sentence": 60}


def test_a_sentence_over_the_models_subwords_is_truncated_with_a_warning(client):
    long = " ".join(["zqxjkv"] * 90)  # within the 100-word limit, over the model's 200 subwords
    [result] = client.post("/api/translate", json={"sentences": [long], "beam": 1}).json()["results"]
    assert any("truncated to 200" in w for w in result["warnings"])
    assert len(result["source_tokens"]) == 201


def test_no_cors_headers_unless_asked(client):
    answer = client.options(
        "/api/translate", headers={"Origin": "http://evil.example", "Access-Control-Request-Method": "POST"}
    )
    assert "access-control-allow-origin" not in answer.headers


SENTENCES = [
    CAT,
    "Where is the station?",
    "I would like a coffee, please.",
    "He is reading a book.",
    "Good night!",
]


async def _concurrently(app, bodies):
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as client:
        answers = await asyncio.gather(*(client.post("/api/translate", json=b) for b in bodies))
    return [a.json()["results"] for a in answers]


def test_concurrent_requests_are_batched_and_equal_one_by_one(app, client):
    stats = app.state.explorer.translate_batcher.stats
    alone = [client.post("/api/translate", json={"sentences": [s]}).json()["results"] for s in SENTENCES]
    before = stats.calls
    together = asyncio.run(_concurrently(app, [{"sentences": [s]} for s in SENTENCES]))
    assert stats.calls - before < len(SENTENCES)  # gathered into fewer model calls
    for a, b in zip(alone, together):
        assert a[0]["translation"] == b[0]["translation"]
        assert a[0]["target_tokens"] == b[0]["target_tokens"]
        np.testing.assert_allclose(a[0]["attention"], b[0]["attention"], atol=2e-5)


def test_int8_serves_the_shipped_transformer_from_its_export():
    """`serve --int8`: translators get their int8 graphs; the shipped Transformer's export is int8 only,
    so without --int8 it would run on torch. Classifiers keep their own (fp32) export."""
    from starlette.testclient import TestClient

    from attnkit.serve import ModelSet, create_app

    models = ModelSet(["enfr-transformer"], ["reviews-han"], int8=True)
    info = models.describe()
    assert info["translators"][0]["backend"] == "onnx int8" and info["classifiers"][0]["backend"] == "onnx"
    with TestClient(create_app(models), base_url="http://127.0.0.1:8000") as client:
        answer = client.post("/api/translate", json={"sentences": ["The cat sits on the mat."]}).json()
    assert answer["results"][0]["translation"].startswith("Le chat")


def test_heavy_requests_run_in_their_own_lane_one_sentence_per_call(app, client):
    """A request at or over ``heavy_work`` goes to the heavy lane (one sentence per model call), so a
    light request never queues behind it; its answer equals the light lane's."""
    explorer = app.state.explorer
    heavy, light = explorer.heavy_translate.stats, explorer.translate_batcher.stats
    words = explorer.limits.heavy_work // 10 + 1  # over the threshold at beam 10
    long = " ".join(["the cat sits on the mat and"] * 8).split()[:words]
    body = {"sentences": [" ".join(long), CAT], "beam": 10}
    before = (heavy.calls, light.calls)
    answer = client.post("/api/translate", json=body).json()["results"]
    assert heavy.calls - before[0] == 2 and light.calls == before[1]  # one call per sentence, heavy lane
    alone = client.post("/api/translate", json={"sentences": [CAT], "beam": 10}).json()["results"]
    assert light.calls == before[1] + 1
    assert answer[1]["translation"] == alone[0]["translation"]
    health = client.get("/api/health").json()["model_calls"]
    assert health["heavy_translate"]["calls"] == heavy.calls


def test_self_attention_of_attnkits_own_transformer_on_request(client, models):
    name = list(models.translators)[1]  # the tiny Transformer on torch
    info = {t["name"]: t for t in client.get("/api/models").json()["translators"]}
    assert info[name]["self_attention"] is True and info["enfr-rnn"]["self_attention"] is False
    body = {"sentences": ["ab cd"], "model": name, "self_attention": True}
    row = client.post("/api/translate", json=body).json()["results"][0]
    translator = models.translators[name].model
    expected = translator.self_attention(translator.translate(["ab cd"])[0])
    np.testing.assert_allclose(row["encoder_attention"], expected["encoder"], atol=1e-5)
    np.testing.assert_allclose(row["decoder_attention"], expected["decoder"], atol=1e-5)
    plain = client.post("/api/translate", json={"sentences": ["ab cd"], "model": name}).json()["results"][0]
    assert "encoder_attention" not in plain


def test_caption_answers_what_the_python_api_gives(client, captioner_ckpt, tmp_path):
    import base64

    from PIL import Image

    from attnkit.api import load_captioner
    from attnkit.datasets.digits import digit_strings

    path = tmp_path / "digits.png"
    Image.fromarray(digit_strings("test", 1)[0].image).save(path)
    url = "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode()
    answer = client.post("/api/caption", json={"images": [url], "beam": 3, "n_best": 2})
    assert answer.status_code == 200
    [result] = answer.json()["results"]
    expected = load_captioner(str(captioner_ckpt)).caption_files([path], beam_size=3, n_best=2)[0].to_json()
    expected["source"] = ""
    assert result == json.loads(json.dumps(expected))
    info = client.get("/api/models").json()["captioners"]
    assert info[0]["grid"] == [6, 24] and info[0]["default"]


def test_attention_maps_are_read_on_the_torch_twin_of_an_onnx_translator(client, models):
    """enfr-rnn is served from its ONNX export; grad is computed on its torch checkpoint, from the ids
    the export decoded, and equals the library's map of the same pair."""
    from attnkit.explain.translator_maps import translator_maps

    info = {t["name"]: t for t in client.get("/api/models").json()["translators"]}
    assert info["enfr-rnn"]["attention_maps"] == ["attention", "norm", "grad", "value_zeroing"]
    assert len(next(t for n, t in info.items() if n != "enfr-rnn")["attention_maps"]) == 6
    body = {"sentences": [CAT], "beam": 5, "attention_map": "grad", "model": "enfr-rnn"}
    row = client.post("/api/translate", json=body).json()["results"][0]
    assert row["attention_map"] == "grad"
    torch_model = load_translator("enfr-rnn", backend="torch")
    expected = translator_maps(torch_model, [CAT], [row["translation"]], "grad")[0]
    assert row["target_tokens"] == expected[1]
    np.testing.assert_allclose(np.array(row["attention"]), expected[2], atol=1e-4)


def test_api_align_returns_the_links_attnkit_align_prints(client, capsys, tmp_path):
    """One alignment path: the explorer aligns enfr-rnn as `attnkit align --model enfr-rnn` does (its
    record's reverse model fren-rnn, grad relevance, mean, intersect), not from raw attention one way."""
    import attnkit
    from attnkit.cli.main import main

    sources, targets = ["The cat sits on the mat ."], ["Le chat est assis sur le tapis ."]
    answer = client.post("/api/align", json={"sources": sources, "targets": targets}).json()
    report = attnkit.align(sources, targets, model="enfr-rnn")
    assert answer["scores"] == "grad" and answer["method"] == "intersect"
    assert [r["links"] for r in answer["results"]] == [r["links"] for r in report.rows()]
    (tmp_path / "s.en").write_text(sources[0] + "\n")
    (tmp_path / "s.fr").write_text(targets[0] + "\n")
    capsys.readouterr()
    assert (
        main(
            ["align", "--model", "enfr-rnn", "--src", str(tmp_path / "s.en"), "--tgt", str(tmp_path / "s.fr")]
        )
        == 0
    )
    printed = capsys.readouterr().out.split()
    assert printed == report.pharaoh()[0].split()
    assert answer["lexical"] == 0.6 == report.settings["lexical"]  # the shipped pair's tables, as the CLI
    body = {"sources": sources, "targets": targets, "probabilities": True}
    mixed, plain = (client.post("/api/align", json={**body, "lexical": w}).json() for w in (0.5, 0))
    assert (
        plain["lexical"] == 0 and mixed["results"][0]["probabilities"] != plain["results"][0]["probabilities"]
    )
    alone = attnkit.align(sources, targets, model="enfr-rnn", lexical=0)
    assert [r["links"] for r in plain["results"]] == [r["links"] for r in alone.rows()]
    refused = client.post("/api/align", json={**body, "lexical": 2})
    assert refused.status_code == 400 and "lexical" in refused.json()["error"]


def test_issue_41_requests_that_were_500s_or_accepted_silently(client):
    """A 5,000-digit number, a charset other than UTF-8, an Origin on another local port, an image over
    the pixel budget: each a 4xx JSON error."""
    digits = client.post(
        "/api/translate", content=b'{"sentences": ["a"], "beam": ' + b"9" * 5000 + b"}", headers=JSON
    )
    assert digits.status_code == 400 and "number of 5000 digits" in digits.json()["error"]
    twice = client.post("/api/translate", content=b'{"sentences": ["a"], "beam": 1, "beam": 9}', headers=JSON)
    assert twice.status_code == 400 and twice.json()["error"] == 'field "beam" is given twice'
    latin = {"Content-Type": "application/json; charset=latin-1"}
    answer = client.post("/api/translate", content=b'{"sentences": ["caf\xe9"]}', headers=latin)
    assert answer.status_code == 415 and "UTF-8" in answer.json()["error"]
    utf8 = {"Content-Type": "application/json; charset=UTF-8"}
    assert client.post("/api/translate", json={"sentences": ["a"]}, headers=utf8).status_code == 200
    for origin, status in (("http://localhost:9999", 403), ("http://127.0.0.1:8000", 200)):
        answer = client.post("/api/translate", json={"sentences": ["a"]}, headers={"Origin": origin})
        assert answer.status_code == status, (origin, answer.json())


def test_an_image_over_the_pixel_budget_is_refused_from_its_header(client):
    import base64
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", 6000, 6000, 16, 0, 0, 0, 0)  # 16-bit grey, 36 megapixels
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IEND", b"")
    answer = client.post("/api/caption", json={"images": [base64.b64encode(png).decode()]})
    assert answer.status_code == 422 and "over 12 megapixels" in answer.json()["error"]
