"""Results render themselves in notebooks (``attnkit.notebook``): one self-contained, isolated view per
output with the explorer's own code, no network; ``show``, ``save_html`` and ``compare`` in Python and the
``attnkit compare`` command."""

from __future__ import annotations

import html
import json
import re

import pytest

import attnkit
from attnkit.api import load_translator
from attnkit.cli.main import main
from attnkit.errors import UsageError
from attnkit.notebook import View, compare, show

CAT = "The cat sits on the mat."
LONG = (
    "The old man who lives next to the station told me yesterday that the trains "
    "will be late again this week because of the snow and the wind."
)


def _page(fragment: str) -> str:
    match = re.search(r'srcdoc="([^"]*)"', fragment)
    assert match, fragment[:200]
    return html.unescape(match.group(1))


def _data(fragment: str) -> dict:
    page = _page(fragment)
    return json.loads(
        page.split('<script id="attnkit-data" type="application/json">', 1)[1].split("</script>", 1)[0]
    )


@pytest.fixture(scope="module")
def transformer():
    return load_translator("enfr-transformer", rerank=False)


def test_a_translation_renders_itself_in_an_isolated_offline_frame(transformer):
    [r] = transformer.translate([CAT])
    fragment = r._repr_html_()
    assert (
        fragment.startswith('<div class="attnkit-output"><iframe')
        and 'sandbox="allow-scripts allow-downloads"' in fragment
    )
    # where a notebook strips frames (untrusted), a static picture stays; where scripts run, it is hidden
    assert 'src="data:image/png;base64,' in fragment and 'static").style.display = "none"' in fragment
    assert "allow-same-origin" not in fragment  # isolated from the notebook and from other outputs
    data = _data(fragment)
    assert data["view"] == "translate" and data["results"][0]["target_tokens"] == r.target_tokens
    page = _page(fragment)
    assert "connect-src 'self'" in page and "http://" not in page.split("<body", 1)[1].split("<script", 1)[0]
    assert re.findall(r'id="(attnkit-[^"]+)"', fragment) != re.findall(
        r'id="(attnkit-[^"]+)"', r._repr_html_()
    )


def test_layer_views_come_with_the_translator_and_a_30_token_view_stays_under_200_kb(transformer):
    [r] = transformer.translate([LONG])
    assert len(r.target_tokens) >= 28  # about 30 pieces on each side
    view = show(r, view="head", model=transformer)
    data = _data(view._repr_html_())
    assert (
        data["initial"] == "head"
        and len(data["results"][0]["layer_attention_milli"]) == transformer.attention_layers
    )
    assert len(view._repr_html_().encode()) < 200_000
    with pytest.raises(UsageError, match="needs every layer's attention"):
        show(r, view="model")


def test_every_result_type_renders(tmp_path, captioner_ckpt):
    classifier = attnkit.load("reviews-han")
    reviews = classifier.classify(["Runs small. Returned it.", "Love it!"])
    data = _data(show(reviews, model=classifier)._repr_html_())
    assert data["view"] == "classify" and data["prior"]["prior_correction"] == classifier.prior_correction
    assert _data(reviews[0]._repr_html_())["prior"]["class_weights"] == [1.0] * 5  # no model: an inert slider
    report = attnkit.align(["the cat sits"], ["le chat est assis"], model="enfr-rnn", reverse_model="none")
    assert _data(report._repr_html_())["results"][0]["source_words"] == ["the", "cat", "sits"]
    heads = {"heads": [], "pruning": [], "baseline": {}, "sinks": {}}
    assert _data(show(heads)._repr_html_())["view"] == "heads"
    from PIL import Image

    from attnkit.api import load_captioner
    from attnkit.datasets.digits import digit_strings

    Image.fromarray(digit_strings("test", 1)[0].image).save(tmp_path / "d.png")
    [caption] = load_captioner(str(captioner_ckpt)).caption_files([str(tmp_path / "d.png")])
    assert _data(caption._repr_html_())["results"][0]["image"].startswith("data:image/png;base64,")


@pytest.mark.parametrize(
    "value,message",
    [
        ("a string", "show takes a Translation, Classification, Caption, AlignmentReport or Inspection"),
        ([], "got a list of nothing"),
        (42, "got a int"),
    ],
)
def test_show_of_something_else_names_what_it_accepts(value, message):
    with pytest.raises(UsageError, match=message):
        show(value)


def test_save_html_writes_the_same_view_and_refuses_a_folder(transformer, tmp_path):
    [r] = transformer.translate([CAT])
    path = attnkit.save_html(r, tmp_path / "cat.html")
    assert "attnkit-data" in path.read_text() and '"notebook":true' in path.read_text()
    with pytest.raises(UsageError, match="is a folder"):
        attnkit.save_html(r, tmp_path)


def test_a_large_list_degrades_with_a_note(monkeypatch, transformer):
    from attnkit import notebook

    results = transformer.translate([CAT, LONG] * 3)
    monkeypatch.setattr(notebook, "MAX_PAYLOAD", 8_000)
    data = _data(show(results, model=transformer)._repr_html_())
    assert "layer maps left out" in data["note"] and len(data["results"]) < 6
    assert all("layer_attention_milli" not in r for r in data["results"])


def test_compare_puts_the_most_disagreeing_sentences_first(transformer):
    sentences = [CAT, "I love you.", "Where is the station?"]
    view = compare(
        "enfr-rnn", transformer, sentences, references=["Le chat est assis sur le tapis."] * 3, beam=2
    )
    assert isinstance(view, View) and view.data["view"] == "compare"
    scores = [item["agreement"] for item in view.data["items"]]
    assert scores == sorted(scores, reverse=True) and "BLEU" in view.data["summary"]
    assert {item["a"]["source"] for item in view.data["items"]} == set(sentences)


def test_compare_refuses_models_of_different_directions_and_outputs_over_inputs(tmp_path, capsys):
    with pytest.raises(UsageError, match="enfr-rnn translates en->fr, fren-rnn fr->en"):
        compare("enfr-rnn", "fren-rnn", [CAT])
    src = tmp_path / "s.en"
    src.write_text(CAT + "\n")
    capsys.readouterr()
    argv = [
        "compare",
        "--model",
        "enfr-rnn",
        "--model",
        "enfr-transformer",
        "--src",
        str(src),
        "--html",
        str(src),
    ]
    assert main(argv) == 2 and "is also --src" in capsys.readouterr().err
    assert src.read_text() == CAT + "\n"
    assert main([*argv[:-1], str(tmp_path / "c.html"), "--beam", "2"]) == 0
    page = (tmp_path / "c.html").read_text()
    data = json.loads(
        page.split('<script id="attnkit-data" type="application/json">', 1)[1].split("</script>", 1)[0]
    )
    assert data["view"] == "compare" and [item["source"] for item in data["items"]] == [CAT]


def test_every_view_has_a_static_picture_for_untrusted_notebooks():
    """Where a notebook strips the frame, an image stays: classification, alignment, heads and compare
    too."""
    classifier = attnkit.load("reviews-han")
    [review] = classifier.classify(["Runs small. Returned it. Love the colour though."])
    report = attnkit.align(["the cat sits"], ["le chat est assis"], model="enfr-rnn", reverse_model="none")
    rows = [
        {"part": p, "layer": 0, "head": h, "delta_bleu": -1.0 * h, "delta_loss": 0.1, "confidence": 0.5}
        for p in ("encoder", "decoder", "cross")
        for h in range(2)
    ]
    heads = {
        "heads": rows,
        "baseline": {"bleu": 30.0, "loss": 1.0},
        "sinks": {},
        "beam": 1,
        "pruning": [{"pruned": 0, "share": 0.0, "bleu": 30.0, "loss": 1.0}],
    }
    compared = attnkit.compare("enfr-rnn", "enfr-transformer", ["the cat sits ."])
    for shown in (show(review, model=classifier), show(report), show(heads), compared):
        assert 'src="data:image/png;base64,' in shown._repr_html_()
    thin = {"heads": [], "pruning": [], "baseline": {}, "sinks": {}}
    assert "data:image/png" not in show(thin)._repr_html_()  # nothing to draw: the line only
