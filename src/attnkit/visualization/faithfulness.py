"""Erasure curves of a faithfulness report (``evaluation.faithfulness``) as one figure (PNG/SVG/PDF).

Two rows (words, sentences) by two columns (comprehensiveness, sufficiency); one line per ranking
method over the fractions k, with its 95% bootstrap band. Higher comprehensiveness and lower
sufficiency mean a ranking found what the decision rests on.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from matplotlib.figure import Figure  # never pyplot: no global backend or figure registry

from ..errors import DataError
from .heatmap import save_figure  # noqa: E402

UNITS = ("word", "sentence")
MEASURES = ("comprehensiveness", "sufficiency")


def faithfulness_figure(report: dict[str, Any]) -> Figure:
    """The curves of ``report`` (``han_faithfulness``'s JSON); missing keys are a ValueError."""
    missing = [key for key in ("fractions", "methods", *UNITS) if key not in report]
    if missing:
        raise DataError(f"not a faithfulness report: missing {', '.join(missing)}")
    ks = [100 * k for k in report["fractions"]]
    fig = Figure(figsize=(10, 7))
    axes = fig.subplots(2, 2, sharex=True)
    for row, units in enumerate(UNITS):
        for col, measure in enumerate(MEASURES):
            ax = axes[row][col]
            for method in report["methods"]:
                curve = report[units][method][measure]["curve"]
                means = [p["mean"] for p in curve]
                aopc = report[units][method][measure]["aopc"]["mean"]
                (line,) = ax.plot(ks, means, marker="o", label=f"{method} (AOPC {aopc:.3f})")
                low, high = [p["ci95"][0] for p in curve], [p["ci95"][1] for p in curve]
                ax.fill_between(ks, low, high, color=line.get_color(), alpha=0.15)
            ax.set_title(f"{measure} ({units}s)")
            ax.set_ylabel("drop in p(predicted class)")
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
    for ax in axes[1]:
        ax.set_xlabel("k: % of the document's units erased (comp.) or kept (suff.)")
    fig.suptitle(f"Erasure faithfulness, {report.get('n_documents', '?')} documents (95% bootstrap bands)")
    fig.tight_layout()
    return fig


def plot_faithfulness(report: dict[str, Any], path: str | Path) -> None:
    """Write ``faithfulness_figure(report)`` to ``path`` (.png, .svg or .pdf), atomically."""
    save_figure(faithfulness_figure(report), path)
