"""Issue 41's explorer review, read as a user reads the page (static pages in headless Chromium, offline):
long inputs, layer kinds, exports, labels, the model and head views, captions, the heads page, titles,
links and alignment hover. Each test names the review item it covers."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from attnkit.visualization.explorer import static_page

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine")


def _rows(rng, shape):
    weights = rng.random(shape) ** 4
    return (weights / weights.sum(-1, keepdims=True)).round(5).tolist()


def _translation(rng, n_src=6, n_tgt=5, layers=3, heads=2, encoder_layers=None):
    src = [f"\u2581s{j}" for j in range(n_src - 1)] + ["</s>"]
    tgt = [f"\u2581t{i}" for i in range(n_tgt - 1)] + ["</s>"]
    result = {
        "source": " ".join(f"s{j}" for j in range(n_src - 1)),
        "translation": " ".join(f"t{i}" for i in range(n_tgt - 1)),
        "score": -0.5,
        "source_tokens": src,
        "target_tokens": tgt,
        "attention": _rows(rng, (n_tgt, n_src)),
    }
    if layers:
        result["layer_attention"] = _rows(rng, (layers, heads, n_tgt, n_src))
    if encoder_layers:
        result["encoder_attention"] = _rows(rng, (encoder_layers, heads, n_src, n_src))
        result["decoder_attention"] = _rows(rng, (layers, heads, n_tgt, n_tgt))
    return result


@pytest.fixture
def show(browser, tmp_path):
    """Opens a static page of `data` offline at 1400 x 900; no page error may happen."""
    context = browser.new_context(viewport={"width": 1400, "height": 900}, accept_downloads=True)
    context.set_offline(True)
    errors: list[str] = []

    def open_page(data, name="page.html"):
        path = tmp_path / name
        path.write_text(static_page(data), encoding="utf-8")
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(path.as_uri())
        page.wait_for_selector("body[data-ready=true]")
        return page

    yield open_page
    context.close()
    assert errors == []


def _drawn(card):
    values = card.eval_on_selector_all("rect.cell", "ns => ns.map(n => Number(n.dataset.weight))")
    rows = card.eval_on_selector_all("rect.cell", "ns => ns.map(n => Number(n.dataset.row))")
    return np.array(values).reshape(max(rows) + 1, -1)


def test_long_inputs_fit_the_page_keep_their_labels_in_view_and_say_when_they_stop(show):
    """Item 2: an 80 x 90 matrix fits the card at 'fit', scrolls with its labels kept in view, is full size
    on request; the translation's stop note is shown."""
    result = _translation(np.random.default_rng(0), n_src=90, n_tgt=80, layers=0)
    result["warnings"] = [
        "stopped at the length limit (79 subwords for a source of 89); its end may be missing"
    ]
    page = show({"view": "translate", "results": [result]})
    card = page.wait_for_selector(".translation-card")
    assert "stopped at the length limit" in card.query_selector(".warning").inner_text()
    width = float(card.eval_on_selector("svg.matrix", "n => n.getAttribute('width')"))
    card_width = card.evaluate("n => n.clientWidth")
    assert width <= card_width and int(card.eval_on_selector("svg.matrix", "n => n.dataset.cell")) < 26
    box = card.query_selector(".scroll-box")
    box.evaluate("b => { b.scrollTop = 100; b.scrollLeft = 0; b.dispatchEvent(new Event('scroll')); }")
    assert card.eval_on_selector("g.col-labels", "g => g.getAttribute('transform')") == "translate(0 100)"
    card.query_selector(".zoom-select").select_option("full")
    assert card.eval_on_selector("svg.matrix", "n => n.dataset.cell") == "26"
    links = float(card.eval_on_selector("svg.links", "n => n.getAttribute('width')"))
    assert links <= 90 * 14 + 130  # steps of 14 px at the least, labels slanted
    assert card.eval_on_selector_all(
        "svg.links text.link-token", "ns => ns.every(n => n.getAttribute('transform'))"
    )


def test_self_attention_kinds_offer_their_own_layers_and_labels(show):
    """Items 3 and 5: an encoder of 8 layers under a decoder of 3: the selector offers layers 0-7, a
    click on layer 7's tile in the model view draws layer 7; the strips and axes say queries and keys."""
    result = _translation(np.random.default_rng(1), layers=3, heads=2, encoder_layers=8)
    page = show({"view": "translate", "results": [result]})
    card = page.wait_for_selector(".translation-card")
    assert len(card.query_selector_all(".layer-select option")) == 2 + 3
    card.query_selector(".which-select").select_option("encoder")
    options = card.eval_on_selector_all(".layer-select option", "ns => ns.map(n => n.textContent)")
    assert options[-1] == "layer 7" and len(options) == 2 + 8
    card.query_selector(".view-select").select_option("model")
    card.query_selector("g.thumb[data-layer='7'][data-head='1']").click()
    page.wait_for_function("c => c.dataset.drawn === '7/matrix/encoder'", arg=card)
    np.testing.assert_allclose(_drawn(card), np.array(result["encoder_attention"][7][1]), atol=1e-5)
    strips = card.eval_on_selector_all(".strip .side", "ns => ns.map(n => n.textContent)")
    assert strips == ["keys (source)", "queries (source)"]
    axes = card.eval_on_selector_all("svg.matrix .axis-title", "ns => ns.map(n => n.textContent)")
    assert "keys (source) \u2192 (columns)" in axes and "queries (source) \u2193 (rows)" in axes
    title = card.query_selector(".view-title").inner_text()
    assert title.startswith("encoder self-attention, layer 7, head 1")
    card.query_selector(".which-select").select_option("decoder")
    strips = card.eval_on_selector_all(".strip .side", "ns => ns.map(n => n.textContent)")
    assert strips == ["keys (target)", "queries (target)"]
    tokens = card.eval_on_selector_all(".strip.source .tok", "ns => ns.map(n => n.title)")
    assert tokens == result["target_tokens"]  # decoder keys are target tokens


def _download(page, card, kind):
    with page.expect_download() as info:
        card.query_selector(f"button[data-export={kind}]").click()
    return Path(info.value.path()).read_bytes()


def test_exports_keep_the_style_a_title_the_head_key_and_every_head_shown(show):
    """Item 4: the SVG has its fonts inlined and a title naming the sentence and the view; the head view's
    export has its colour key; its JSON holds every head drawn."""
    result = _translation(np.random.default_rng(2), layers=2, heads=3)
    page = show({"view": "translate", "results": [result]})
    card = page.wait_for_selector(".translation-card")
    exported = _download(page, card, "svg").decode("utf-8")
    assert "<style>" in exported and "font:12px system-ui" in exported
    assert (
        f"{result['source']} \u2192 {result['translation']}" in exported and "decoding attention" in exported
    )
    card.query_selector(".layer-select").select_option("1")
    card.query_selector(".view-select").select_option("head")
    page.wait_for_function("c => c.dataset.drawn === '1/head'", arg=card)
    exported = _download(page, card, "svg").decode("utf-8")
    assert exported.count('class="head-key"') == 3 and "layer 1, heads 0, 1, 2" in exported
    view = json.loads(_download(page, card, "json"))
    assert view["heads"] == [0, 1, 2]
    np.testing.assert_allclose(
        np.array(view["head_attention"]), np.array(result["layer_attention"][1]), atol=1e-5
    )
    assert _download(page, card, "png").startswith(b"\x89PNG")


def test_the_head_view_separates_heads_and_follows_the_head_and_words_choices(show):
    """Item 7: two heads with the same map both show (their lines are offset); choosing head 1 draws only
    head 1; the words toggle merges each head's pieces."""
    rng = np.random.default_rng(3)
    result = _translation(rng, layers=1, heads=2)
    result["layer_attention"][0][1] = result["layer_attention"][0][0]  # identical heads
    result["source_tokens"] = ["\u2581ab", "cd", "\u2581e", "\u2581f", "g", "</s>"]
    page = show({"view": "translate", "results": [result]})
    card = page.wait_for_selector(".translation-card")
    card.query_selector(".layer-select").select_option("0")
    card.query_selector(".view-select").select_option("head")
    page.wait_for_function("c => c.dataset.drawn === '0/head'", arg=card)
    ys = card.eval_on_selector_all(
        "line.head-line[data-row='0'][data-col='0']",
        "ns => ns.map(n => [n.dataset.head, Number(n.getAttribute('y1'))])",
    )
    assert len(ys) == 2 and ys[0][1] != ys[1][1]
    card.query_selector(".head-select").select_option("1")
    heads = card.eval_on_selector_all("line.head-line", "ns => [...new Set(ns.map(n => n.dataset.head))]")
    assert heads == ["1"]
    card.query_selector(".words-toggle").check()
    sources = card.eval_on_selector_all("text.head-token.source", "ns => ns.map(n => n.textContent)")
    assert sources == ["abcd", "e", "fg", "</s>"]


def test_the_model_view_fits_the_page_and_names_each_tile_on_hover(show):
    """Item 6: 6 heads x 4 layers of a 12 x 14 map: tiles of more than 3 px a cell, the whole grid within
    the card, a hover names the layer and head with numbers."""
    result = _translation(np.random.default_rng(4), n_src=14, n_tgt=12, layers=4, heads=6)
    page = show({"view": "translate", "results": [result]})
    card = page.wait_for_selector(".translation-card")
    card.query_selector(".view-select").select_option("model")
    page.wait_for_function("c => c.dataset.drawn === 'model/model'", arg=card)
    width = float(card.eval_on_selector("svg.model-view", "n => n.getAttribute('width')"))
    assert width <= card.evaluate("n => n.clientWidth")
    tile = card.query_selector("g.thumb[data-layer='3'][data-head='5']")
    assert tile.evaluate("g => g.querySelector('.thumb-frame').getBBox().width") > 14 * 3
    tile.hover()
    caption = card.eval_on_selector(".model-caption", "n => n.textContent")
    assert re.match(r"layer 3, head 5: mean entropy [0-9.]+ nats, largest weight [0-9.]+", caption)


def test_titles_entropy_units_links_legend_and_hover(show):
    """Item 11: the title says what is drawn; matrix and links are stacked; the links view has a legend,
    and hovering a token keeps its lines only."""
    result = _translation(np.random.default_rng(5), layers=2, heads=2)
    result["attention_map"] = "rollout"
    page = show({"view": "translate", "results": [result]})
    card = page.wait_for_selector(".translation-card")
    assert (
        card.query_selector(".view-title").inner_text().startswith("map: rollout, derived from the attention")
    )
    card.query_selector(".layer-select").select_option("1")
    card.query_selector(".head-select").select_option("0")
    assert (
        card.query_selector(".view-title").inner_text()
        == "cross-attention, layer 1, head 0 \u00b7 subword pieces"
    )
    matrix, links = (
        card.query_selector("svg.matrix").bounding_box(),
        card.query_selector("svg.links").bounding_box(),
    )
    assert links["y"] >= matrix["y"] + matrix["height"]  # stacked, whatever the width
    assert "line: weight" in card.eval_on_selector("svg.links .links-legend", "n => n.textContent")
    card.query_selector("svg.links text.link-token.top[data-index='2']").hover()
    kept = card.eval_on_selector_all("svg.links line.link:not(.dim)", "ns => ns.map(n => n.dataset.col)")
    assert kept and set(kept) == {"2"}


def test_alignment_pairs_fit_hover_and_name_their_links(show):
    """Item 12: a 50-word pair fits the card with slanted words; hovering a word dims the other links and
    says what it links to; every legend entry has a swatch."""
    words = [f"w{i}" for i in range(50)]
    links = [[i, i] for i in range(50)]
    page = show(
        {
            "view": "align",
            "results": [{"source_words": words, "target_words": words, "links": links, "status": []}],
            "score": None,
        }
    )
    card = page.wait_for_selector(".alignment-card")
    width = float(card.eval_on_selector("svg.alignment", "n => n.getAttribute('width')"))
    assert width <= card.evaluate("n => n.clientWidth")
    card.query_selector("text.align-word.source[data-index='7']").hover()
    assert card.query_selector(".align-note").inner_text() == "w7: w7 (predicted)"
    assert len(card.query_selector_all("line.align:not(.dim)")) == 1
    assert page.eval_on_selector_all(".aer .legend-item", "ns => ns.every(n => n.querySelector('.swatch'))")


def test_captions_fit_the_page_and_keep_the_digit_visible(show):
    """Item 9: a 4000 x 3000 image is drawn within 576 px; the overlay is at most 55% opaque, the peak
    cell outlined; the inversion note is shown."""
    attention = np.full((1, 2, 2), 0.25).tolist()
    result = {
        "caption": "one",
        "tokens": ["one"],
        "score": -0.1,
        "image_size": [3000, 4000],
        "grid": [2, 2],
        "attention": attention,
        "eos_attention": [[0.7, 0.1], [0.1, 0.1]],
        "image": "",
        "warnings": ["image: light background, so the image was inverted"],
    }
    page = show({"view": "caption", "results": [result]})
    card = page.wait_for_selector(".caption-card")
    assert card.eval_on_selector(".cap-frame", "n => n.getBoundingClientRect().width") <= 576
    assert "inverted" in card.query_selector(".warning").inner_text()
    card.query_selector("button.tok[data-step='1']").hover()
    alpha = card.eval_on_selector_all(".cap-cell", "ns => ns.map(n => getComputedStyle(n).backgroundColor)")
    assert max(float(a.split(",")[-1].rstrip(")")) for a in alpha) == pytest.approx(0.55, abs=1e-3)
    assert len(card.query_selector_all(".cap-cell.peak")) == 1


def test_the_heads_page_reads_well_and_refuses_files_in_plain_words(show, tmp_path):
    """Item 10: the printed numbers do not catch the pointer; the curve has axis values; the header names
    the model, not a server path; an empty pruning list and a PNG each get a plain message."""
    heads = [
        {"part": "cross", "layer": 0, "head": h, "delta_bleu": -1.5 * h, "delta_loss": 0.1, "confidence": 0.5}
        for h in range(2)
    ]
    report = {
        "model": "/srv/models/enfr/checkpoint.pt",
        "n_sentences": 1,
        "beam": 1,
        "baseline": {"bleu": 30, "loss": 1.2},
        "heads": heads,
        "pruning": [
            {"share": 0, "pruned": 0, "bleu": 30, "loss": 1.2},
            {"share": 1, "pruned": 2, "bleu": 3, "loss": 4},
        ],
        "sinks": {},
    }
    page = show({"view": "heads", "report": report})
    header = page.inner_text(".heads-card .source")
    assert header.startswith("checkpoint.pt: 1 pair, beam 1") and "/srv" not in header
    cell = page.query_selector("rect.head-cell[data-head='1']").bounding_box()
    hit = page.evaluate(
        "([x, y]) => document.elementFromPoint(x, y).tagName",
        [cell["x"] + cell["width"] / 2, cell["y"] + cell["height"] / 2],
    )
    assert hit == "rect"
    ticks = page.eval_on_selector_all(".pruning-curve .tick", "ns => ns.map(n => n.textContent)")
    assert {"0%", "50%", "100%", "30.0"} <= set(ticks)
    page = show({"view": "heads", "report": {**report, "pruning": []}}, "empty.html")
    assert "no pruning curve" in page.inner_text(".no-curve")
    png = tmp_path / "figure.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00")
    page.evaluate("() => { document.body.classList.remove('static'); }")
    page.evaluate("() => wireHeads()")
    page.set_input_files("#heads-file", str(png))
    message = page.wait_for_selector("#heads-results .error-block").inner_text()
    assert (
        message == "figure.png: not a JSON file; choose the report written by attnkit heads --out FILE.json"
    )


def _context(t=8000, layers=2, heads=4):
    rng = np.random.default_rng(6)
    received = rng.random((layers, t))
    received[:, 0] = t / 4  # an attention sink on the first token
    received /= received.sum(1, keepdims=True)
    row = rng.random(t)
    row /= row.sum()
    roles = ["sink", "previous-token", "induction", "broad"]
    stats = [
        {
            "layer": layer,
            "head": h,
            "kv_group": h // 2,
            "role": roles[h],
            "entropy": 1.0,
            "distance": 3.0,
            "sink": 0.5,
            "previous": 0.1,
            "induction": 0.0,
        }
        for layer in range(layers)
        for h in range(heads)
    ]
    return {
        "model": "tiny",
        "tokens": [f"\u2581w{i}" for i in range(t)],
        "ids": list(range(t)),
        "prompt_tokens": t,
        "layers": layers,
        "heads": heads,
        "kv_heads": 2,
        "received": received.round(6).tolist(),
        "head_stats": stats,
        "captured": [{"layer": 1, "head": 0, "rows": [t - 1], "weights": [row.round(6).tolist()]}],
        "maps": {"rollout": {"rows": [t - 1], "weights": [row[::-1].round(6).tolist()]}},
    }


def test_the_long_context_view_draws_8k_tokens_with_a_window_of_text_rows_and_roles(show):
    """Issue 43's explorer view: every token in one overview picture, only a window of tokens in the DOM;
    a click on a captured token shows its row; an uncaptured one says how to capture it; roles coloured."""
    data = _context()
    page = show({"view": "context", "result": data})
    card = page.wait_for_selector(".context-card")
    assert card.eval_on_selector("canvas.context-overview", "c => Number(c.dataset.tokens)") == 8000
    assert len(card.query_selector_all(".ctx-tok")) <= 240
    first = card.query_selector(".ctx-tok[data-index='0']").evaluate(
        "n => getComputedStyle(n).backgroundColor"
    )
    assert first.endswith("1)") or first == "rgb(214, 69, 36)"  # the sink is the darkest token
    canvas = card.query_selector("canvas.context-overview")
    canvas.click(position={"x": (7999 % 128) * 8 + 4, "y": (7999 // 128) * 10 + 4})
    page.wait_for_function("c => c.dataset.drawn === '1/0/7999/attention'", arg=card)
    assert "layer 1, head 0: row of token 7999" in card.query_selector(".view-title").inner_text()
    titles = card.eval_on_selector_all(".ctx-tok", "ns => ns.map(n => [Number(n.dataset.index), n.title])")
    for index, title in titles[-5:]:
        assert float(title.split(": ")[1]) == pytest.approx(
            data["captured"][0]["weights"][0][index], abs=1e-5
        )
    card.query_selector("canvas.context-overview").click(position={"x": 4 + 8 * 5, "y": 4})  # redrawn
    assert "its row was not captured" in card.query_selector(".context-note").inner_text()
    assert "--rows 5" in card.query_selector(".context-note").inner_text()
    colours = card.eval_on_selector_all(
        "rect.role-cell[data-layer='0']", "ns => ns.map(n => [n.dataset.role, n.getAttribute('fill')])"
    )
    assert dict(colours) == {
        "sink": "#d64524",
        "previous-token": "#1a9850",
        "induction": "#984ea3",
        "broad": "#2166ac",
    }
