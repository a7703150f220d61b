"""Pictures of visual attention: Xu et al.'s figure (each word with its attention laid over the image)
and a self-contained HTML page (hover a word, or step through time, to see where the model looked).

A word's map is the (h, w) attention grid upsampled to the image's size: bilinear between cell centres,
as the paper's figure smooths it; the numbers are the grid's, the smoothing is only for the eye."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from ..data.images import png_bytes
from ..files import atomic_write_bytes
from .heatmap import check_path

SHADE_FLOOR = 0.1  # shading is weight / max(peak, 0.1): a map spread thin stays faint (the explorer too)


def upsample(grid: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """(h, w) attention -> (H, W), bilinear between cell centres, divided by max(peak, SHADE_FLOOR)."""
    from PIL import Image

    top = max(float(grid.max()), SHADE_FLOOR)
    small = Image.fromarray((grid / top).astype(np.float32), mode="F")
    return np.asarray(small.resize((size[1], size[0]), Image.Resampling.BILINEAR), dtype=np.float32)


def caption_figure(result: Any, image: np.ndarray, columns: int = 4) -> Figure:
    """The image, then one panel per word (and </s>): the attention over the image, the word as title."""
    maps = [*result.attention, result.eos_attention]
    words = [*result.tokens, "</s>"]
    panels = len(maps) + 1
    cols = min(columns, panels)
    rows = -(-panels // cols)
    height, width = image.shape[:2]
    fig = Figure(figsize=(cols * 3.2, rows * 3.2 * height / width + rows * 0.45), layout="constrained")
    gray = "gray" if image.ndim == 2 else None
    for k in range(panels):
        ax = fig.add_subplot(rows, cols, k + 1)
        ax.imshow(image, cmap=gray, vmin=0, vmax=255)
        if k == 0:
            ax.set_title(result.caption or "(empty caption)", fontsize=9)
        else:
            overlay = upsample(maps[k - 1], (height, width))
            ax.imshow(overlay, cmap="magma", alpha=0.6, vmin=0, vmax=1)
            ax.set_title(f"{k}. {words[k - 1]}  (peak {maps[k - 1].max():.2f})", fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    return fig


def plot_caption(result: Any, image: np.ndarray, path: str | Path) -> None:
    """Write ``caption_figure`` to ``path`` (.png, .svg or .pdf), atomically."""
    import io

    suffix = check_path(path)
    out = io.BytesIO()
    caption_figure(result, image).savefig(out, format=suffix, dpi=110)
    atomic_write_bytes(path, out.getvalue())


def caption_data(result: Any, image: np.ndarray) -> dict[str, Any]:
    """What the page draws for one image: the API's JSON and the image as a PNG data URL."""
    return {
        **result.to_json(),
        "image": "data:image/png;base64," + base64.b64encode(png_bytes(image)).decode(),
    }


def caption_page(results: list[Any], images: list[np.ndarray]) -> str:
    """The explorer's Caption view as one offline page (no network: the images are inline)."""
    from .explorer import static_page

    return static_page({"view": "caption", "results": [caption_data(r, i) for r, i in zip(results, images)]})


__all__ = ["caption_data", "caption_figure", "caption_page", "plot_caption", "upsample"]
