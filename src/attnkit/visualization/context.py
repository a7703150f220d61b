"""A causal LM's long-context attention (``results.Inspection``) as one figure: the attention each token
receives per layer (a layers x tokens heatmap on a log scale, so attention sinks and the rest both show)
and the layer x head grid coloured by role (``explain.roles``)."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.colors import ListedColormap, LogNorm
from matplotlib.figure import Figure  # never pyplot: no global backend or figure registry

from ..names import HEAD_ROLES as ROLES

COLOURS = {
    "induction": "#984ea3",
    "previous-token": "#1a9850",
    "sink": "#d64524",
    "local": "#ff7f00",
    "broad": "#2166ac",
    "mixed": "#b3b3b3",
}


def context_figure(result: Any) -> Figure:
    layers, heads = result.entropy.shape
    t = len(result.tokens)
    fig = Figure(figsize=(13, 3.2 + 0.25 * layers))
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [4, 1.2]})
    received = np.maximum(np.asarray(result.received, dtype=np.float64), 1e-9)
    image = left.imshow(
        received,
        aspect="auto",
        cmap="Reds",
        norm=LogNorm(vmin=max(received.min(), 1e-6), vmax=received.max()),
        interpolation="nearest",
    )
    left.set_xlabel(f"token position (0..{t - 1})")
    left.set_ylabel("layer")
    left.set_yticks(range(layers))
    top = np.argsort(-received.mean(0))[:3]
    marks = ", ".join(f"{i} {result.tokens[i]!r} ({received.mean(0)[i]:.3f})" for i in sorted(top))
    left.set_title(f"attention received per layer (log scale); most: {marks}", fontsize=9)
    fig.colorbar(image, ax=left, shrink=0.8)
    codes = np.array([[ROLES.index(r) for r in row] for row in result.roles])
    right.imshow(
        codes,
        cmap=ListedColormap([COLOURS[r] for r in ROLES]),
        vmin=-0.5,
        vmax=len(ROLES) - 0.5,
        aspect="auto",
        interpolation="nearest",
    )
    right.set_xlabel("head")
    right.set_ylabel("layer")
    right.set_xticks(range(heads))
    right.set_yticks(range(layers))
    counts = {r: sum(row.count(r) for row in result.roles) for r in ROLES}
    handles = [right.scatter([], [], marker="s", color=COLOURS[r], label=f"{r} ({counts[r]})") for r in ROLES]
    right.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False)
    right.set_title("head roles", fontsize=9)
    fig.tight_layout()
    return fig
