"""Static pictures of the views that have no figure of their own, for a notebook whose HTML is stripped
(an untrusted notebook keeps an ``<img>``, not the interactive frame): a classification's decision and
weights, an alignment's links, and two models compared on their most disagreeing sentence."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.figure import Figure  # never pyplot: no global backend or figure registry
from matplotlib.patches import Rectangle

from .heatmap import attention_figure, display_piece


def classification_figure(result: Any, most_words: int = 12) -> Figure:
    """The label's probabilities, each sentence's weight and the words that weigh most (weight x their
    sentence's), of one ``Classification``."""
    fig = Figure(figsize=(10, 3.2))
    left, middle, right = fig.subplots(1, 3, gridspec_kw={"width_ratios": [1, 1.2, 1.6]})
    labels = list(result.probabilities)
    left.barh(labels, [result.probabilities[c] for c in labels], color="#2166ac")
    left.set_title(f"decision: {result.label}", fontsize=10)
    left.set_xlim(0, 1)
    weights = list(result.sentence_weights)
    middle.barh([f"sentence {j + 1}" for j in range(len(weights))][::-1], weights[::-1], color="#2166ac")
    middle.set_title("sentence weights", fontsize=10)
    scored = [
        (w * sw, word)
        for words, ws, sw in zip(result.sentences, result.word_weights, weights)
        for word, w in zip(words, ws)
    ]
    top = sorted(scored, reverse=True)[:most_words][::-1]
    right.barh([f"{word}" for _, word in top], [v for v, _ in top], color="#d64524")
    right.set_title("words (weight x sentence weight)", fontsize=10)
    fig.tight_layout()
    return fig


def probabilities_figure(row: dict[str, Any], probabilities: np.ndarray) -> Figure:
    """One pair's alignment probabilities (target words x source words) with its links outlined."""
    rows, cols = probabilities.shape  # the words both directions read (a long pair may be cut)
    source, target = row["source_words"][:cols], row["target_words"][:rows]
    fig = attention_figure(
        probabilities, source, target, title="alignment probabilities (links outlined)", label="probability"
    )
    ax = fig.axes[0]
    for s, t in (link for link in row["links"] if link[0] < cols and link[1] < rows):
        ax.add_patch(Rectangle((s - 0.5, t - 0.5), 1, 1, fill=False, edgecolor="#2166ac", linewidth=2))
    return fig


def links_figure(row: dict[str, Any]) -> Figure:
    """One aligned pair's links (an ``AlignmentReport.rows()`` item) as a target x source grid, 1 = linked."""
    source, target = row["source_words"], row["target_words"]
    grid = np.zeros((len(target), len(source)))
    for s, t in row["links"]:
        grid[t, s] = 1.0
    return attention_figure(grid, source, target, values=False, title="links (first pair)", label="link")


def compare_figure(data: dict[str, Any]) -> Figure:
    """A ``compare`` view's first item (the sentences are ordered most disagreeing first): both models'
    attention (T, S) side by side, each titled with its model and translation, the metrics beneath."""
    item = data["items"][0]
    sides = [item[key] for key in ("a", "b") if item[key]["translation"]]
    if not sides:
        raise ValueError("neither model translated the first sentence")
    widths = [len(side["source_tokens"]) for side in sides]
    fig = Figure(
        figsize=(
            max(8.0, 0.5 * sum(widths) + 4),
            max(3.5, 0.4 * max(len(s["target_tokens"]) for s in sides) + 2.5),
        )
    )
    for ax, name, side in zip(fig.subplots(1, len(sides), squeeze=False)[0], data["models"], sides):
        ax.imshow(
            np.asarray(side["attention"], dtype=float), cmap="YlOrRd", vmin=0.0, vmax=1.0, aspect="auto"
        )
        source, target = ([display_piece(x) for x in side[k]] for k in ("source_tokens", "target_tokens"))
        ax.set_xticks(range(len(source)), source, rotation=45, ha="right")
        ax.set_yticks(range(len(target)), target)
        ax.set_title(f"{name}: {side['translation'][:60]}", fontsize=9)
    fig.suptitle(f"{item['source'][:90]}\n{item['metrics']}", fontsize=9)
    fig.tight_layout()
    return fig
