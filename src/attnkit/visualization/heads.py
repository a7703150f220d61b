"""A head report (``evaluation.heads``) as one figure: per part a layers x heads heatmap of the BLEU
change when that head alone is masked, and the pruning curve (BLEU as heads are masked in order)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure  # never pyplot: no global backend or figure registry

from ..errors import DataError
from .heatmap import save_figure

PARTS = ("encoder", "decoder", "cross")


def heads_figure(report: dict[str, Any]) -> Figure:
    missing = [key for key in ("baseline", "heads", "pruning") if key not in report]
    if missing:
        raise DataError(f"not a head report: missing {', '.join(missing)}")
    fig = Figure(figsize=(13, 4.2))
    axes = fig.subplots(1, len(PARTS) + 1, gridspec_kw={"width_ratios": [1, 1, 1, 1.4]})
    deltas = [abs(r["delta_bleu"]) for r in report["heads"]] or [1.0]
    limit = max(max(deltas), 0.1)
    for ax, part in zip(axes, PARTS):
        rows = [r for r in report["heads"] if r["part"] == part]
        grid = np.zeros((max(r["layer"] for r in rows) + 1, max(r["head"] for r in rows) + 1))
        for r in rows:
            grid[r["layer"], r["head"]] = r["delta_bleu"]
        image = ax.imshow(grid, cmap="RdBu", vmin=-limit, vmax=limit, origin="lower", aspect="auto")
        for (layer, head), value in np.ndenumerate(grid):
            ax.text(head, layer, f"{value:+.1f}", ha="center", va="center", fontsize=7)
        ax.set_title(part)
        ax.set_xlabel("head")
        ax.set_ylabel("layer")
        ax.set_xticks(range(grid.shape[1]))
        ax.set_yticks(range(grid.shape[0]))
    fig.colorbar(image, ax=list(axes[: len(PARTS)]), shrink=0.8)
    fig.suptitle(f"BLEU change when one head is masked (baseline {report['baseline']['bleu']})", x=0.38)
    curve = report["pruning"]
    ax = axes[-1]
    ax.plot([100 * p["share"] for p in curve], [p["bleu"] for p in curve], marker="o")
    ax.set_title("pruning: least important heads first")
    ax.set_xlabel("% of heads masked")
    ax.set_ylabel(f"BLEU (beam {report.get('beam', 1)})")
    ax.grid(alpha=0.3)
    return fig


def plot_heads(report: dict[str, Any], path: str | Path) -> None:
    save_figure(heads_figure(report), path)
