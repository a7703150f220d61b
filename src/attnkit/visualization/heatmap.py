"""Attention heatmaps with token labels, a colorbar and optional values in cells (PNG/SVG/PDF)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # never pyplot: no global backend or figure registry

from ..data.words import aggregate_to_words, group_words  # noqa: E402
from ..errors import UsageError
from ..files import atomic_write_bytes  # noqa: E402

FORMATS = ("pdf", "png", "svg")


def check_path(path: str | Path) -> str:
    suffix = Path(path).suffix.lstrip(".").lower()
    if suffix not in FORMATS:
        raise UsageError(f"cannot write {path}: unknown image format {suffix!r}; valid: {', '.join(FORMATS)}")
    return suffix


def display_piece(token: str) -> str:
    return token.replace("\u2581", "") if token not in ("\u2581",) else "_"


def attention_figure(
    weights: np.ndarray,
    source_tokens: Sequence[str],
    target_tokens: Sequence[str],
    values: bool | None = None,
    title: str = "Attention weights",
    cmap: str = "YlOrRd",
    label: str = "attention weight",
) -> Figure:
    """A heatmap of ``weights`` (T, S): rows are target tokens, columns source tokens.

    ``values`` writes each weight in its cell (default: when the grid is at most 12 x 12).
    """
    weights = np.asarray(weights, dtype=float)
    if weights.shape != (len(target_tokens), len(source_tokens)):
        raise ValueError(
            f"weights must be (T, S) = ({len(target_tokens)}, {len(source_tokens)}), got {weights.shape}"
        )
    t, s = weights.shape
    fig = Figure(figsize=(max(4.0, 0.55 * s + 2.5), max(3.0, 0.45 * t + 1.8)))
    ax = fig.subplots()
    image = ax.imshow(weights, cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto")
    bar = fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    bar.ax.set_ylabel(label, rotation=-90, va="bottom")
    ax.set_xticks(range(s), [display_piece(x) for x in source_tokens], rotation=45, ha="right")
    ax.set_yticks(range(t), [display_piece(x) for x in target_tokens])
    ax.set_xlabel("source")
    ax.set_ylabel("target")
    if values if values is not None else max(t, s) <= 12:
        for i in range(t):
            for j in range(s):
                color = "white" if weights[i, j] > 0.6 else "black"
                ax.text(j, i, f"{weights[i, j]:.2f}", ha="center", va="center", color=color, fontsize=8)
    ax.set_title(title)
    fig.tight_layout()
    return fig


def head_grid_figure(
    maps: np.ndarray,
    source_tokens: Sequence[str],
    target_tokens: Sequence[str],
    title: str = "Cross-attention by layer and head",
) -> Figure:
    """A layer x head grid of cross-attention maps. maps: (L, H, T, S)."""
    layers, heads = maps.shape[:2]
    fig = Figure(figsize=(2.6 * heads + 1, 2.4 * layers + 0.8))
    axes = fig.subplots(layers, heads, squeeze=False)
    for layer in range(layers):
        for head in range(heads):
            ax = axes[layer][head]
            ax.imshow(maps[layer, head], cmap="viridis", vmin=0.0, vmax=1.0, aspect="auto")
            ax.set_title(f"layer {layer + 1}, head {head + 1}", fontsize=8)
            ax.set_xticks(
                range(len(source_tokens)), [display_piece(x) for x in source_tokens], rotation=90, fontsize=6
            )
            ax.set_yticks(range(len(target_tokens)), [display_piece(x) for x in target_tokens], fontsize=6)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def save_figure(fig: Figure, path: str | Path) -> None:
    """Save atomically in the format named by the extension, then close the figure."""
    fmt = check_path(path)
    import io

    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, dpi=150, bbox_inches="tight")
    atomic_write_bytes(Path(path), buffer.getvalue())


def plot_translation(result: Any, path: str | Path, values: bool | None = None, words: bool = False) -> None:
    """Draw a Translation's attention (T, S) to ``path`` (one file: ``plot_head_grid`` draws the heads)."""
    check_path(path)
    weights, src, tgt = result.attention, result.source_tokens, result.target_tokens
    if words:
        weights = aggregate_to_words(weights, src, tgt)
        src, tgt = group_words(src), group_words(tgt)
    title = f"{result.source}\n\u2192 {result.translation}"
    kind = getattr(result, "attention_map", "attention")
    label = "attention weight" if kind == "attention" else f"{kind} (row-normalized)"
    save_figure(attention_figure(weights, src, tgt, values, title=title, label=label), path)


def plot_head_grid(result: Any, maps: Any, path: str | Path) -> None:
    """Every layer's and head's cross-attention (L, H, T, S) of a translation as a grid, to ``path``."""
    check_path(path)
    save_figure(head_grid_figure(maps, result.source_tokens, result.target_tokens), path)
