"""Plots with the Agg backend: labels, colorbar and values are there; bad shapes are clear errors."""

import json

import numpy as np
import pytest

from attnkit.visualization.explorer import embedded_json, static_page
from attnkit.visualization.heatmap import attention_figure, head_grid_figure, save_figure


def test_heatmap_has_token_labels_colorbar_and_values(tmp_path):
    weights = np.array([[0.8, 0.2], [0.1, 0.9], [0.5, 0.5]])
    fig = attention_figure(
        weights, ["\u2581The", "\u2581cat"], ["\u2581Le", "\u2581chat", "</s>"], values=True
    )
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["The", "cat"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["Le", "chat", "</s>"]
    assert "0.80" in [t.get_text() for t in ax.texts]
    assert len(fig.axes) == 2  # the colorbar
    save_figure(fig, tmp_path / "a.png")
    assert (tmp_path / "a.png").read_bytes()[:4] == b"\x89PNG"


def test_heatmap_shape_mismatch_names_shapes():
    with pytest.raises(ValueError, match=r"\(T, S\) = \(1, 2\), got \(2, 2\)"):
        attention_figure(np.eye(2), ["a", "b"], ["x"])


def test_head_grid_titles():
    fig = head_grid_figure(np.random.rand(2, 3, 4, 5), list("abcde"), list("wxyz"))
    assert len(fig.axes) == 6 and fig.axes[5].get_title() == "layer 2, head 3"


def test_static_page_embeds_results_without_markup_characters():
    data = {"view": "classify", "results": [{"text": "<b>nice</b> & </script><!--", "sentences": [["<b>"]]}]}
    page = static_page(data)
    body = page.split('id="attnkit-data" type="application/json">')[1].split("</script>")[0]
    assert "<" not in body and ">" not in body and "&" not in body
    assert json.loads(body) == data == json.loads(embedded_json(data))
    assert '<script src="explorer.js">' not in page and "function start()" in page  # self-contained
