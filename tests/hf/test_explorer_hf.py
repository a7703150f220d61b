"""The explorer over a Hugging Face translator: encoder and decoder self-attention beside the
cross-attention, in the API (equal to the model's own) and on the page."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from attnkit.serve.app import create_app
from attnkit.serve.models import ModelSet
from tests.hf.tiny import SOURCES
from tests.serve.test_browser import CHROMIUM, REQUIRED, page  # noqa: F401 (fixtures)

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient


@pytest.fixture(scope="module")
def hf_models(marian_dir):
    return ModelSet([str(marian_dir)], [])


def test_api_returns_the_models_own_self_attention(hf_models):
    client = TestClient(create_app(hf_models), base_url="http://127.0.0.1:8000")
    info = client.get("/api/models").json()["translators"][0]
    assert info["self_attention"] is True
    row = client.post("/api/translate", json={"sentences": [SOURCES[0]], "self_attention": True}).json()[
        "results"
    ][0]
    translator = next(iter(hf_models.translators.values())).model
    tok, model = translator.hf_tokenizer, translator.model
    ids = translator.target_tokenizer.encode(row["translation"])
    with torch.no_grad():
        out = model(
            **tok([SOURCES[0]], return_tensors="pt"),
            decoder_input_ids=torch.tensor([[model.config.decoder_start_token_id, *ids]]),
            output_attentions=True,
        )
    encoder = np.array(row["encoder_attention"])
    assert encoder.shape == (2, 4, len(row["source_tokens"]), len(row["source_tokens"]))
    np.testing.assert_allclose(
        encoder, torch.stack([a[0] for a in out.encoder_attentions]).numpy(), atol=1e-5
    )
    decoder = np.array(row["decoder_attention"])
    np.testing.assert_allclose(
        decoder, torch.stack([a[0] for a in out.decoder_attentions]).numpy(), atol=1e-5
    )
    assert np.allclose(np.triu(decoder[0, 0], 1), 0.0)  # causal


@pytest.fixture(scope="module")
def hf_server(hf_models):
    from tests.helpers import serve_in_thread

    url, running = serve_in_thread(create_app(hf_models))
    yield url
    running.should_exit = True


@pytest.mark.skipif(CHROMIUM is None and not REQUIRED, reason="no chromium on this machine")
def test_page_shows_encoder_self_attention_of_a_hugging_face_model(hf_server, page, hf_models):  # noqa: F811
    page.goto(f"{hf_server}/#translate")
    page.wait_for_selector("body[data-ready=true]")
    page.fill("#translate-input", SOURCES[0])
    page.click("#translate-run")
    card = page.wait_for_selector(".translation-card")
    card.query_selector(".which-select").select_option("encoder")
    page.wait_for_function("card => card.dataset.drawn === 'model/matrix/encoder'", arg=card)
    translator = next(iter(hf_models.translators.values())).model
    result = translator.translate([SOURCES[0]])[0]
    expected = translator.self_attention(result)["encoder"][-1].mean(0)  # the last layer's head mean
    values = card.eval_on_selector_all("rect.cell", "ns => ns.map(n => n.dataset.weight)")
    np.testing.assert_allclose(
        np.array([float(v) for v in values]).reshape(expected.shape), expected, atol=2e-5
    )
