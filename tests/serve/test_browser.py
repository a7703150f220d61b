"""The explorer in real headless Chromium (Debian's ``chromium`` driven by Playwright): what users see
equals what the API answers. Screenshots go to $ATTNKIT_SCREENSHOTS (default: a temporary folder)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import httpx
import numpy as np
import pytest

from attnkit.api import load_classifier
from attnkit.cli.main import main
from attnkit.data.words import aggregate_to_words

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
REQUIRED = os.environ.get("ATTNKIT_REQUIRE_BROWSER") == "1"  # set by .ci/run: a missing browser fails
pytestmark = pytest.mark.skipif(CHROMIUM is None and not REQUIRED, reason="no chromium on this machine")
CAT = "The cat sits on the mat."
XSS = "<img src=x onerror=alert(1)> and </script><script>alert(2)</script>"


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    folder = Path(os.environ.get("ATTNKIT_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    opened = context.new_page()
    errors: list[str] = []
    dialogs: list[str] = []
    opened.on("pageerror", lambda e: errors.append(str(e)))
    opened.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    opened.errors, opened.dialogs = errors, dialogs
    yield opened
    context.close()
    assert errors == [] and dialogs == []


@pytest.fixture
def offline_page(browser):
    """Opens a static page (a file) in an offline context; no page error may happen before teardown."""
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    context.set_offline(True)
    errors: list[str] = []

    def open_file(path):
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(path.as_uri())
        return page

    yield open_file
    context.close()
    assert errors == []


def _open(page, server, view):
    page.goto(f"{server}/#{view}")
    page.wait_for_selector("body[data-ready=true]")


def _api(server, path, body):
    return httpx.post(f"{server}{path}", json=body, timeout=60).json()


def _highlights(card, side):
    return [
        float(x) for x in card.eval_on_selector_all(f".tok.{side}", "ns => ns.map(n => n.dataset.highlight)")
    ]


def test_translate_page_shows_the_translation_and_hover_equals_the_attention(server, page, shots):
    _open(page, server, "translate")
    page.fill("#translate-input", CAT)
    page.click("#translate-run")
    card = page.wait_for_selector(".translation-card")
    expected = _api(server, "/api/translate", {"sentences": [CAT], "beam": 5, "n_best": 3})["results"][0]
    assert card.query_selector(".translation").inner_text() == expected["translation"]
    attention = np.array(expected["attention"])
    for i in range(len(expected["target_tokens"])):
        card.query_selector_all(".tok.target")[i].hover()
        np.testing.assert_allclose(_highlights(card, "source"), attention[i], atol=1e-5)
    card.query_selector_all(".tok.source")[1].hover()  # and the other way round: a source column
    np.testing.assert_allclose(_highlights(card, "target"), attention[:, 1], atol=1e-5)
    page.screenshot(path=str(shots / "translate.png"), full_page=True)


def test_words_toggle_merges_subwords_as_the_python_side_does(server, page):
    _open(page, server, "translate")
    page.fill("#translate-input", CAT)
    page.click("#translate-run")
    card = page.wait_for_selector(".translation-card")
    expected = _api(server, "/api/translate", {"sentences": [CAT], "beam": 5, "n_best": 3})["results"][0]
    card.query_selector(".words-toggle").check()
    words = aggregate_to_words(
        np.array(expected["attention"]), expected["source_tokens"], expected["target_tokens"]
    )
    cells = [float(x) for x in card.eval_on_selector_all("rect.cell", "ns => ns.map(n => n.dataset.weight)")]
    np.testing.assert_allclose(np.array(cells).reshape(words.shape), words, atol=2e-5)
    assert len(card.query_selector_all(".tok.source")) == words.shape[1]


def test_layer_and_head_selector_changes_the_matrix(server, page, models):
    """The page asks for layer attention only when a card's layer view is first opened, for that card."""
    name = list(models.translators)[1]  # the tiny Transformer
    _open(page, server, "translate")
    asked: list[dict] = []
    page.on(
        "request",
        lambda r: asked.append(json.loads(r.post_data)) if r.url.endswith("/api/translate") else None,
    )
    page.select_option("#translate-model", name)
    page.fill("#translate-input", "ab cd\nef")
    page.click("#translate-run")
    card = page.wait_for_selector(".translation-card")
    result = _api(server, "/api/translate", {"sentences": ["ab cd"], "model": name, "layers": True})[
        "results"
    ][0]
    layers = np.array(result["layer_attention"])  # (L, H, T, S)

    def cells():
        values = card.eval_on_selector_all("rect.cell", "ns => ns.map(n => n.dataset.weight)")
        return np.array([float(x) for x in values]).reshape(layers.shape[2:])

    np.testing.assert_allclose(cells(), result["attention"], atol=2e-5)
    assert [a.get("layers") for a in asked] == [None] and len(asked[0]["sentences"]) == 2
    card.query_selector(".layer-select").select_option("0")
    page.wait_for_function("card => card.dataset.drawn === '0/matrix'", arg=card)
    assert asked[1]["layers"] is True and asked[1]["sentences"] == ["ab cd"]
    np.testing.assert_allclose(cells(), layers[0].mean(0), atol=2e-5)
    card.query_selector(".head-select").select_option("1")
    np.testing.assert_allclose(cells(), layers[0, 1], atol=2e-5)
    card.query_selector(".layer-select").select_option("all")  # the summary over layers and heads
    np.testing.assert_allclose(cells(), layers.mean((0, 1)), atol=2e-5)
    assert not np.allclose(layers[0, 1], layers[0].mean(0), atol=1e-4)  # so the selector really changed it


def _flipping_review():
    """A review whose decision differs without and with full prior correction."""
    plain, corrected = (
        load_classifier("reviews-han", prior_correction=0.0),
        load_classifier("reviews-han", prior_correction=1.0),
    )
    for text in [
        "Runs small. Returned it.",
        "It is ok. The color is nice but the fit is odd.",
        "Love it!",
        "Meh.",
    ]:
        a, b = plain.classify([text])[0].label, corrected.classify([text])[0].label
        if a != b:
            return text, a, b
    raise AssertionError("no candidate review changes its decision with the prior correction")


def test_classify_page_shades_words_and_the_slider_re_decides(server, page, shots):
    text, at_zero, at_one = _flipping_review()
    _open(page, server, "classify")
    page.fill("#classify-input", text)
    page.click("#classify-run")
    card = page.wait_for_selector(".classification-card")
    expected = _api(server, "/api/classify", {"documents": [text]})["results"][0]
    shown = [float(x) for x in card.eval_on_selector_all(".word", "ns => ns.map(n => n.dataset.weight)")]
    assert shown == pytest.approx([w for row in expected["word_weights"] for w in row], abs=1e-5)
    # shades: word weight x sentence weight over the document's largest, not scaled per sentence
    effective = [w * s for row, s in zip(expected["word_weights"], expected["sentence_weights"]) for w in row]
    shades = [float(x) for x in card.eval_on_selector_all(".word", "ns => ns.map(n => n.dataset.shade)")]
    assert shades == pytest.approx([e / max(effective) for e in effective], abs=1e-4)
    assert card.get_attribute("data-label") == expected["label"]
    for tau, label in ((0.0, at_zero), (1.0, at_one)):
        card.eval_on_selector(
            ".prior-slider", f"s => {{ s.value = {tau}; s.dispatchEvent(new Event('input')); }}"
        )
        assert card.get_attribute("data-label") == label
    page.screenshot(path=str(shots / "classify.png"), full_page=True)


def test_align_page_colours_links_against_gold(server, page, shots):
    _open(page, server, "align")
    page.fill("#align-src", "the cat sits on the mat .")
    page.fill("#align-tgt", "le chat est assis sur le tapis .")
    page.fill("#align-gold", "1 1 1 S\n1 2 2 S\n1 3 3 P\n1 3 4 S\n1 7 8 S")
    page.click("#align-run")
    page.wait_for_selector(".alignment-card")
    statuses = page.eval_on_selector_all("line.align", "ns => ns.map(n => n.dataset.status)")
    assert statuses and set(statuses) <= {"sure", "possible", "wrong"}
    assert page.inner_text(".aer").startswith("AER ")
    page.screenshot(path=str(shots / "align.png"), full_page=True)


def test_user_text_is_escaped_in_the_served_pages(server, page):
    _open(page, server, "translate")
    page.fill("#translate-input", XSS)
    page.click("#translate-run")
    card = page.wait_for_selector(".translation-card")
    assert card.query_selector(".source").inner_text() == XSS
    page.goto(f"{server}/#classify")
    page.wait_for_selector("body[data-ready=true]")
    page.fill("#classify-input", f"Nice dress. {XSS}")
    page.click("#classify-run")
    page.wait_for_selector(".classification-card")
    assert page.query_selector_all("img") == [] and page.query_selector_all("main script") == []


def test_static_exports_work_from_file_urls_offline(browser, tmp_path, shots):
    translate_html, classify_html = tmp_path / "translate.html", tmp_path / "classify.html"
    assert main(["translate", "--html", str(translate_html), CAT, XSS]) == 0
    assert main(["classify", "--html", str(classify_html), f"Runs small. Returned it. {XSS}"]) == 0
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    context.set_offline(True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: (errors.append(d.message), d.dismiss()))
    page.goto(translate_html.as_uri())
    cards = page.query_selector_all(".translation-card")
    assert len(cards) == 2 and cards[1].query_selector(".source").inner_text() == XSS
    cards[0].query_selector_all(".tok.target")[0].hover()
    assert max(_highlights(cards[0], "source")) > 0
    page.goto(classify_html.as_uri())
    card = page.wait_for_selector(".classification-card")
    assert card.get_attribute("data-label") in {"1", "2", "3", "4", "5"}
    assert "onerror" in card.inner_text()  # shown as words, never run
    assert page.query_selector_all("img") == []
    context.close()
    assert errors == []


def test_view_exports_download_the_current_view(server, page):
    _open(page, server, "translate")
    page.fill("#translate-input", CAT)
    page.click("#translate-run")
    card = page.wait_for_selector(".translation-card")
    card.query_selector(".words-toggle").check()
    files = {}
    for kind in ("json", "svg", "png"):
        with page.expect_download() as info:
            card.query_selector(f"button[data-export={kind}]").click()
        files[kind] = Path(info.value.path()).read_bytes()
    view = json.loads(files["json"])
    assert view["view"]["words"] is True and len(view["attention"]) == len(view["target_tokens"])
    assert view["source_tokens"][1] == "cat"
    assert files["svg"].startswith(b"<svg") and b"rect" in files["svg"]
    assert files["png"].startswith(b"\x89PNG")


@pytest.mark.parametrize(
    "pieces",
    [
        ["\u2581le", "\u2581ch", "at", "</s>"],
        ["[CLS]", "the", "cat", "##s", "sat", "[SEP]"],
        ["<s>", "The", "\u0120c", "ats", "\u0120sat", "</s>"],
    ],
)
def test_page_groups_words_as_the_library_does_for_every_tokenizer_family(server, page, pieces):
    from attnkit.data.words import group_words, word_groups

    _open(page, server, "translate")
    groups = page.evaluate("p => wordGroups(p)", pieces)
    labels = page.evaluate("p => wordGroups(p).map((g) => groupLabel(p, g))", pieces)
    assert groups == word_groups(pieces) and labels == group_words(pieces)


def test_head_view_and_model_view_draw_every_heads_weights(server, page, models, shots):
    """Head view: one line per head and token pair, its opacity the weight the API answers, several heads
    overlaid and filtered to the hovered token; model view: layers x heads, a click opens that head."""
    name = list(models.translators)[1]  # the tiny Transformer: 2 layers x 2 heads
    _open(page, server, "translate")
    page.select_option("#translate-model", name)
    page.fill("#translate-input", "ab cd")
    page.click("#translate-run")
    card = page.wait_for_selector(".translation-card")
    layers = np.array(
        _api(server, "/api/translate", {"sentences": ["ab cd"], "model": name, "layers": True})["results"][0][
            "layer_attention"
        ]
    )
    card.query_selector(".view-select").select_option("head")
    page.wait_for_function("card => card.dataset.drawn === 'model/head'", arg=card)
    lines = card.eval_on_selector_all(
        "line.head-line",
        "ns => ns.map(n => [+n.dataset.head, +n.dataset.row, +n.dataset.col, +n.getAttribute"
        "('stroke-opacity')])",
    )
    assert {h for h, *_ in lines} == {0, 1}  # both heads overlaid
    for h, i, j, opacity in lines:
        assert opacity == pytest.approx(layers[-1, h, i, j], abs=1e-4)  # the last layer when none is chosen
    assert len(lines) == int((layers[-1] >= 0.01).sum())
    card.query_selector(".head-picker input[data-head='1']").uncheck()
    assert {
        int(h) for h in card.eval_on_selector_all("line.head-line", "ns => ns.map(n => n.dataset.head)")
    } == {0}
    card.query_selector("text.head-token.target[data-index='0']").hover()
    shown = card.eval_on_selector_all(
        "line.head-line", "ns => ns.filter(n => n.style.display !== 'none').map(n => +n.dataset.row)"
    )
    assert shown and set(shown) == {0}
    card.query_selector(".head-picker input[data-head='1']").check()
    page.mouse.move(0, 0)
    card.screenshot(path=str(shots / "head-view.png"))
    card.query_selector(".view-select").select_option("model")
    assert len(card.query_selector_all("g.thumb")) == layers.shape[0] * layers.shape[1]
    card.screenshot(path=str(shots / "model-view.png"))
    card.query_selector("g.thumb[data-layer='0'][data-head='1']").click()
    page.wait_for_function("card => card.dataset.drawn === '0/matrix'", arg=card)
    values = card.eval_on_selector_all("rect.cell", "ns => ns.map(n => n.dataset.weight)")
    np.testing.assert_allclose(
        np.array([float(v) for v in values]).reshape(layers.shape[2:]), layers[0, 1], atol=2e-5
    )


def test_matrix_has_titles_a_scale_hoverable_cells_and_marks_continuation_pieces(server, page):
    _open(page, server, "translate")
    page.fill("#translate-input", "The cat sits on the mat.")
    page.click("#translate-run")
    card = page.wait_for_selector(".translation-card")
    titles = card.eval_on_selector_all("svg.matrix .axis-title", "ns => ns.map(n => n.textContent)")
    assert (
        "source \u2192 (columns)" in titles
        and "weight" in titles
        and len(card.query_selector_all("rect.legend")) == 5
    )
    pieces = card.eval_on_selector_all(
        ".tok.source", "ns => ns.map(n => [n.title, n.classList.contains('cont')])"
    )
    assert any(cont for _, cont in pieces) or all(p.startswith("\u2581") or p == "</s>" for p, _ in pieces)
    assert all(not cont for p, cont in pieces if p.startswith("\u2581") or p == "</s>")
    card.query_selector("rect.cell[data-row='1'][data-col='0']").hover()
    assert card.eval_on_selector(".tok.target[data-index='1']", "n => n.classList.contains('active')")
    assert card.eval_on_selector(".tok.source[data-index='0']", "n => n.dataset.highlight") != ""


def test_an_error_replaces_stale_results(server, page):
    _open(page, server, "translate")
    page.fill("#translate-input", "The cat sits on the mat.")
    page.click("#translate-run")
    page.wait_for_selector(".translation-card")
    page.fill("#translate-input", " ".join(["word"] * 150))  # over the server's 100 words
    page.click("#translate-run")
    block = page.wait_for_selector("#translate-results .error-block")
    assert "at most 100" in block.inner_text() and not page.query_selector(".translation-card")


def test_n_best_alternatives_show_their_own_attention(server, page):
    _open(page, server, "translate")
    page.fill("#translate-input", "The cat sits on the mat.")
    page.fill("#translate-nbest", "3")
    page.click("#translate-run")
    card = page.wait_for_selector(".translation-card")
    body = {"sentences": ["The cat sits on the mat."], "beam": 5, "n_best": 3, "alternative_attention": True}
    result = _api(server, "/api/translate", body)["results"][0]
    card.query_selector("details").click()
    card.query_selector("button.hypothesis[data-rank='2']").click()
    page.wait_for_function("card => card.dataset.drawn === 'rank 2'", arg=card)
    alternative = np.array(result["alternative_attention"][1])
    values = card.eval_on_selector_all("rect.cell", "ns => ns.map(n => n.dataset.weight)")
    np.testing.assert_allclose(
        np.array([float(v) for v in values]).reshape(alternative.shape), alternative, atol=2e-5
    )
    shown = card.eval_on_selector_all(".tok.target", "ns => ns.map(n => n.title)")
    assert shown == result["alternative_tokens"][1]


def _cell_weights(card):
    return [float(x) for x in card.eval_on_selector_all(".cap-cell", "ns => ns.map(n => n.dataset.weight)")]


def test_caption_page_shows_each_words_attention_over_the_image(server, page, tmp_path, shots):
    from PIL import Image

    from attnkit.datasets.digits import digit_strings

    path = tmp_path / "digits.png"
    Image.fromarray(digit_strings("test", 1)[0].image).save(path)
    _open(page, server, "caption")
    page.set_input_files("#caption-file", str(path))
    page.wait_for_selector("#caption-picked:not(:empty)")
    page.click("#caption-run")
    card = page.wait_for_selector(".caption-card")
    import base64

    url = "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode()
    expected = _api(server, "/api/caption", {"images": [url], "beam": 3, "n_best": 3})["results"][0]
    assert card.query_selector(".translation").inner_text() == (expected["caption"] or "(empty caption)")
    maps = [*expected["attention"], expected["eos_attention"]]
    chips = card.query_selector_all(".cap-words .tok")
    assert len(chips) == len(maps) and len(card.query_selector_all(".cap-cell")) == 6 * 24
    for t, chip in enumerate(chips):
        chip.hover()
        np.testing.assert_allclose(_cell_weights(card), np.array(maps[t]).ravel(), atol=1e-4)
    card.query_selector("button.step[aria-label='previous word']").click()
    np.testing.assert_allclose(_cell_weights(card), np.array(maps[-2]).ravel(), atol=1e-4)
    card.screenshot(path=str(shots / "caption.png"))


def test_static_caption_page_works_offline(offline_page, captioner_ckpt, tmp_path):
    from PIL import Image

    from attnkit.datasets.digits import digit_strings

    path = tmp_path / "digits.png"
    Image.fromarray(digit_strings("test", 1)[0].image).save(path)
    page_file = tmp_path / "caption.html"
    assert main(["caption", str(path), "--model", str(captioner_ckpt), "--html", str(page_file)]) == 0
    page = offline_page(page_file)
    card = page.wait_for_selector(".caption-card")
    assert card.query_selector(".source").inner_text() == str(path)
    assert abs(sum(_cell_weights(card)) - 1.0) < 1e-3  # the first word's map is shown


def test_the_map_selector_shows_a_derived_map_equal_to_the_api(server, page, models):
    _open(page, server, "translate")
    options = page.eval_on_selector_all("#translate-map option", "ns => ns.map(n => n.value)")
    assert options == ["attention", "norm", "grad", "value_zeroing"]  # enfr-rnn, the default: no rollout
    page.fill("#translate-input", CAT)
    page.select_option("#translate-map", "grad")
    page.click("#translate-run")
    card = page.wait_for_selector(".translation-card")
    assert "map: grad" in card.query_selector(".map-kind").inner_text()
    body = {"sentences": [CAT], "beam": 5, "n_best": 3, "attention_map": "grad"}
    expected = np.array(_api(server, "/api/translate", body)["results"][0]["attention"])
    card.query_selector_all(".tok.target")[1].hover()
    np.testing.assert_allclose(_highlights(card, "source"), expected[1], atol=1e-5)
    transformer = next(name for name in models.translators if name != "enfr-rnn")
    page.select_option("#translate-model", transformer)
    options = page.eval_on_selector_all("#translate-map option", "ns => ns.map(n => n.value)")
    assert options == ["attention", "rollout", "flow", "norm", "grad", "value_zeroing"]


def test_the_heads_page_draws_a_head_report_offline(offline_page, transformer_ckpt, tmp_path, shots):
    src, ref = tmp_path / "src.txt", tmp_path / "ref.txt"
    src.write_text("the cat sat .\na dog .\n")
    ref.write_text("le chat .\nun chien .\n")
    page_file, report_file = tmp_path / "heads.html", tmp_path / "heads.json"
    argv = ["heads", str(transformer_ckpt), "--src", str(src), "--ref", str(ref), "--steps", "3"]
    assert main([*argv, "--html", str(page_file), "--out", str(report_file)]) == 0
    report = json.loads(report_file.read_text())
    page = offline_page(page_file)
    card = page.wait_for_selector(".heads-card")
    cells = card.query_selector_all("rect.head-cell")
    assert len(cells) == len(report["heads"]) == 12
    drawn = {(c.get_attribute("data-layer"), c.get_attribute("data-head")) for c in cells[:4]}
    assert len(drawn) == 4
    first = next(r for r in report["heads"] if r["part"] == "encoder")
    where = f'[data-layer="{first["layer"]}"][data-head="{first["head"]}"]'
    cell = card.query_selector(f"svg[data-part=encoder] rect{where}")
    assert float(cell.get_attribute("data-delta")) == first["delta_bleu"]
    points = [float(p.get_attribute("data-bleu")) for p in card.query_selector_all("circle.pruning-point")]
    assert points == [p["bleu"] for p in report["pruning"]]
    assert len(card.query_selector_all("table.sinks tr")) == 1 + 6  # header + 3 parts x 2 layers
    page.screenshot(path=str(shots / "heads.png"), full_page=True)


@pytest.fixture(scope="module")
def default_server():
    """The explorer as `attnkit serve` starts it: the default translator (int8 Transformer, reranked by
    fren-rnn as its record says) and the default classifier."""
    from attnkit.serve import ModelSet, create_app
    from tests.helpers import serve_in_thread

    url, running = serve_in_thread(create_app(ModelSet(["enfr-transformer"], ["reviews-han"])))
    yield url
    running.should_exit = True
    running.thread.join(timeout=10)


def test_the_default_servers_views_and_maps_draw_the_readme_sentence(default_server, page):
    """Reranking x layer views x maps on the default (issue 40: 'Cannot read properties of undefined' for
    21.5% of dev sentences, the README's among them, when the channel picked another candidate)."""
    body = {"sentences": [CAT], "beam": 5, "n_best": 3, "layers": True}
    result = _api(default_server, "/api/translate", body)["results"][0]
    assert result["rerank"]["candidates"][0]["beam_rank"] != 0  # the channel chose another candidate
    layers = np.array(result["layer_attention"])  # (L, H, T, S)
    assert layers.shape[2:] == (len(result["target_tokens"]), len(result["source_tokens"]))
    _open(page, default_server, "translate")
    page.fill("#translate-input", CAT)
    page.click("#translate-run")
    card = page.wait_for_selector(".translation-card")
    card.query_selector(".layer-select").select_option("0")
    page.wait_for_function("card => card.dataset.drawn === '0/matrix'", arg=card)
    values = card.eval_on_selector_all("rect.cell", "ns => ns.map(n => n.dataset.weight)")
    np.testing.assert_allclose(
        np.array([float(v) for v in values]).reshape(layers.shape[2:]), layers[0].mean(0), atol=2e-5
    )
    for view, drawn in (("head", "/head"), ("model", "/model")):
        card.query_selector(".view-select").select_option(view)
        page.wait_for_function("([card, end]) => (card.dataset.drawn || '').endsWith(end)", arg=[card, drawn])
    for method in ("rollout", "grad"):
        page.select_option("#translate-map", method)
        page.click("#translate-run")
        page.wait_for_function(
            f"() => document.querySelector('.map-kind')?.innerText.includes('map: {method}')"
        )
        card = page.query_selector(".translation-card")
        rows = len(card.query_selector_all(".tok.target"))
        assert rows == len(result["target_tokens"])


def test_notebook_outputs_render_offline_hover_and_stay_independent(browser, tmp_path, shots):
    """Two saved notebook outputs on one page (as Jupyter, VS Code or nbconvert lay them out): hovering a
    target token in the first shades its source cells there and not in the second, and no request leaves."""
    from attnkit.api import load_translator

    translator = load_translator("enfr-rnn", rerank=False)
    first, second = translator.translate([CAT, "Where is the station?"])
    page_file = tmp_path / "notebook.html"
    body = "".join(f'<div class="output">{r._repr_html_()}</div>' for r in (first, second))
    page_file.write_text(f"<!doctype html><html><body>{body}</body></html>", encoding="utf-8")
    context = browser.new_context(viewport={"width": 1100, "height": 1400})
    requests: list[str] = []
    context.on("request", lambda r: requests.append(r.url))
    context.set_offline(True)
    page = context.new_page()
    page.goto(page_file.as_uri())
    frames = [f for f in page.frames if f != page.main_frame]
    assert len(frames) == 2
    for frame in frames:
        frame.wait_for_selector("body[data-ready=true]")
    card_a, card_b = (f.wait_for_selector(".translation-card") for f in frames)
    raw = lambda card: card.eval_on_selector_all(".tok.source", "ns => ns.map(n => n.dataset.highlight)")  # noqa: E731
    before_b = raw(card_b)
    card_a.query_selector_all(".tok.target")[1].hover()
    expected = np.array(first.attention[1])
    np.testing.assert_allclose(_highlights(card_a, "source"), expected, atol=1e-4)
    assert raw(card_b) == before_b  # the other output did not move
    page.screenshot(path=str(shots / "notebook-outputs.png"), full_page=True)
    assert [u for u in requests if not u.startswith(("file:", "about:", "data:"))] == []
    assert not page.is_visible("div[id$='-static'] img")  # scripts run: the static picture is hidden
    context.close()
    # where a notebook does not run the output's scripts (an untrusted one also strips the frame), the
    # static picture of the attention shows
    static = browser.new_context(java_script_enabled=False, viewport={"width": 1100, "height": 1400})
    plain = static.new_page()
    plain.goto(page_file.as_uri())
    assert (
        plain.is_visible("div[id$='-static'] img")
        and plain.eval_on_selector("div[id$='-static'] img", "img => img.naturalWidth") > 100
    )
    static.close()


def test_a_notebook_list_of_results_is_one_view_with_a_picker(browser, tmp_path):
    from attnkit.api import load_translator
    from attnkit.notebook import show

    results = load_translator("enfr-rnn", rerank=False).translate(
        [CAT, "I love you.", "Where is the station?"]
    )
    page_file = tmp_path / "list.html"
    page_file.write_text(f"<!doctype html><html><body>{show(results)._repr_html_()}</body></html>")
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    page.goto(page_file.as_uri())
    [frame] = [f for f in page.frames if f != page.main_frame]
    frame.wait_for_selector("body[data-ready=true]")

    def visible() -> list[str]:
        cards = frame.query_selector_all(".translation-card")
        return [c.query_selector(".source").inner_text() for c in cards if c.is_visible()]

    assert visible() == [CAT]
    frame.select_option("select.result-picker", "2")
    assert visible() == ["Where is the station?"]
    context.close()


def test_a_notebook_output_works_inside_a_sandboxed_output_frame(browser, tmp_path):
    """Colab and VS Code put each output in a sandboxed frame of its own: the view still draws and hovers."""
    import html as html_lib

    from attnkit.api import load_translator

    [r] = load_translator("enfr-rnn", rerank=False).translate([CAT])
    source = html_lib.escape(r._repr_html_())
    outer = f'<iframe sandbox="allow-scripts" style="width:1000px;height:900px" srcdoc="{source}"></iframe>'
    page_file = tmp_path / "sandboxed.html"
    page_file.write_text(f"<!doctype html><html><body>{outer}</body></html>")
    context = browser.new_context(viewport={"width": 1100, "height": 1000})
    context.set_offline(True)
    page = context.new_page()
    page.goto(page_file.as_uri())
    page.wait_for_timeout(500)
    inner = [f for f in page.frames if f.parent_frame is not None and f.parent_frame != page.main_frame]
    assert len(inner) == 1
    inner[0].wait_for_selector("body[data-ready=true]")
    card = inner[0].wait_for_selector(".translation-card")
    card.query_selector_all(".tok.target")[1].hover()
    np.testing.assert_allclose(_highlights(card, "source"), np.array(r.attention[1]), atol=1e-4)
    context.close()


def test_what_a_user_reads_scales_units_legends_and_the_nbest_header(default_server, page, tmp_path):
    """Issue 41's explorer items 1, 8, 11, 12, 13, read as a user reads them."""
    _open(page, default_server, "translate")
    page.fill("#translate-input", CAT)
    page.select_option("#translate-map", "rollout")
    page.click("#translate-run")
    card = page.wait_for_selector(".translation-card")
    note = card.eval_on_selector("svg.matrix .scale-note", "n => n.textContent")
    peak = max(
        float(v) for v in card.eval_on_selector_all("rect.cell", "ns => ns.map(n => n.dataset.weight)")
    )
    assert note == f"scaled to this view's largest weight, {peak:.3f}" and peak < 0.999
    darkest = max(
        float(v)
        for v in card.eval_on_selector_all("rect.cell", "ns => ns.map(n => n.getAttribute('fill-opacity'))")
    )
    assert darkest == pytest.approx(1.0, abs=1e-3)  # the largest weight is drawn full strength
    assert "entropy (nats)" in card.eval_on_selector_all(
        "svg.matrix .col-label", "ns => ns.map(n => n.textContent)"
    )
    # n-best of the reranked default: the order's score is shown and a click says which hypothesis is drawn
    page.select_option("#translate-map", "attention")
    page.click("#translate-run")
    page.wait_for_function(
        "() => document.querySelector('.translation-card') && !document.querySelector('.map-kind')"
    )
    card = page.wait_for_selector(".translation-card")
    card.eval_on_selector("details", "d => { d.open = true; }")
    summary = card.eval_on_selector(".nbest", "n => n.parentElement.querySelector('summary').textContent")
    assert "reranked by a channel model" in summary and "click one" in summary
    items = card.eval_on_selector_all(".nbest li", "ns => ns.map(n => n.textContent)")
    combined = [float(t.split("combined ")[1].split(" ")[0]) for t in items]
    assert combined == sorted(combined, reverse=True)
    second = card.query_selector_all("button.hypothesis")[1]
    second.click()  # the alternatives' attention is fetched on first use
    page.wait_for_function("card => card.dataset.drawn === 'rank 1'", arg=card)
    assert card.query_selector(".translation").inner_text() == f"#2: {second.inner_text()}"
    # a classification with one star and the legend; an alignment without gold
    static = tmp_path / "classify.html"
    from attnkit.visualization.explorer import static_page

    result = {
        "text": "Bad.",
        "label": "1",
        "probabilities": {"1": 0.9, "2": 0.1},
        "sentences": [["Bad", "."]],
        "sentence_weights": [1.0],
        "word_weights": [[0.8, 0.2]],
        "unread_words": 0,
    }
    prior = {"labels": ["1", "2"], "class_weights": [1.0, 1.0], "prior_correction": 0.0}
    static.write_text(static_page({"view": "classify", "results": [result], "prior": prior}))
    page.goto(static.as_uri())
    decided = page.wait_for_selector(".classification-card .decision").inner_text()
    assert decided.startswith("1 star (") and "word weight" in page.inner_text(".legend-line")
    assert "1: its training class weights divided out" in page.inner_text(".tau")
    aligned = tmp_path / "align.html"
    rows = [{"source_words": ["a", "b"], "target_words": ["c", "d"], "links": [[0, 0], [1, 1]], "status": []}]
    aligned.write_text(static_page({"view": "align", "results": rows, "score": None}))
    page.goto(aligned.as_uri())
    assert page.wait_for_selector("line.align", state="attached").get_attribute("data-status") == "predicted"
    assert "predicted link (no gold links given)" in page.inner_text(".aer")
