"""The explorer's Context page and ``/api/inspect`` (``attnkit serve --lm``): a causal LM's long-context
view over HTTP, within the server's token and cell limits, every refusal a 4xx naming the field."""

from __future__ import annotations

import shutil

import httpx
import pytest

from tests.helpers import serve_in_thread
from tests.hf import causal_families

TEXT = "the cat sits on the mat . where is the dog ? i like tea . " * 8


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    from attnkit.serve import ModelSet, create_app

    folder = causal_families.build("llama", tmp_path_factory.mktemp("llama") / "tiny-llama")
    url, running = serve_in_thread(create_app(ModelSet(["enfr-rnn"], ["reviews-han"], lms=[str(folder)])))
    yield url
    running.should_exit = True
    running.thread.join(timeout=10)


def _post(url, body):
    return httpx.post(f"{url}/api/inspect", json=body, timeout=60)


def test_the_api_answers_what_attnkit_inspect_answers(server):

    models = httpx.get(f"{server}/api/models").json()["lms"]
    assert models == [{"name": "tiny-llama", "layers": 2, "heads": 4, "default": True}]
    answer = _post(server, {"text": TEXT, "rows": "-3:", "heads": "1", "maps": ["rollout"]})
    assert answer.status_code == 200
    result = answer.json()["result"]
    assert len(result["received"]) == 2 and result["captured"][0]["head"] == 1
    assert set(result["maps"]) == {"rollout"} and len(result["maps"]["rollout"]["rows"]) == 3
    assert answer.json()["model"] == result["model"] == "tiny-llama"  # a name, never the server's path


@pytest.mark.parametrize(
    ("body", "status", "message"),
    [
        ({"text": TEXT * 40}, 422, "tokens; at most 4096 per request"),
        ({"text": TEXT, "rows": ":", "heads": ":", "layers": ":"}, 200, ""),
        ({"text": TEXT, "rows": 5}, 400, "field 'rows' must be a string of indices"),
        ({"text": TEXT, "rows": "999"}, 422, "rows 999 is out of range"),
        ({"text": TEXT, "maps": ["flow"]}, 400, "field 'maps' must be a list of 'rollout' and 'grad'"),
        ({"text": TEXT, "model": "gpt-9"}, 422, "unknown lm"),
        ({"rows": "1"}, 400, "field 'text'"),
    ],
)
def test_bad_requests_are_4xx_naming_the_field(server, body, status, message):
    answer = _post(server, body)
    assert answer.status_code == status, answer.text
    if message:
        assert message in answer.json()["error"]


@pytest.mark.skipif(shutil.which("chromium") is None, reason="no chromium on this machine")
def test_the_context_page_inspects_a_text(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{server}/#context")
    page.wait_for_selector("body[data-ready=true]")
    assert page.eval_on_selector("#context-model", "s => s.options[0].value") == "tiny-llama"
    page.fill("#context-input", TEXT)
    page.fill("#context-rows", "-2:")
    page.click("#context-run")
    card = page.wait_for_selector(".context-card")
    assert "tiny-llama" in card.query_selector(".source").inner_text()
    assert len(card.query_selector_all("rect.role-cell")) == 2 * 4
    card.query_selector(".ctx-tok[data-index='3']").click()  # not captured: the page asks for its row
    page.wait_for_function("c => (c.dataset.drawn || '').includes('/3/')", arg=card, timeout=30000)
    assert "row of token 3" in card.query_selector(".view-title").inner_text()
    page.close()
    assert errors == []
