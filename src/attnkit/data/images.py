"""Images for the captioner: read any file Pillow can decode, checked, converted and resized.

Conversions (documented in docs/captioning.md): RGBA and LA are laid over black (the digits' background);
16- and 32-bit grayscale are scaled from their full range to 8 bits; palette and CMYK become RGB; then the
image becomes grayscale or RGB as the model wants and is resized (bilinear) to the model's input size. The
attention grid then tiles the image as given uniformly, whatever its size.

Refused with one line naming the file: what Pillow cannot read, a truncated file, an image smaller than
``MIN_SIDE`` px on a side, and more than ``MAX_PIXELS`` pixels (checked from the header before decoding).
"""

from __future__ import annotations

import io
import warnings
from pathlib import Path

import numpy as np

from ..errors import DataError

MIN_SIDE = 8
# 12 megapixels (a 4000 x 3000 photo): larger images are refused from their header, before decoding (a
# 91 KB 16-bit 6000 x 6000 PNG took 5.6 s and 900 MB to decode)
MAX_PIXELS = 12_000_000


def _open(data: bytes, where: str):  # type: ignore[no-untyped-def]
    from PIL import Image, UnidentifiedImageError

    too_large = f"{where}: image is over {MAX_PIXELS // 1_000_000} megapixels, the most that is read"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # our own limit is lower
            image = Image.open(io.BytesIO(data))
    except Image.DecompressionBombError as exc:
        raise DataError(f"{too_large} ({exc})") from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError):
        raise DataError(f"{where}: not an image Pillow can read (PNG, JPEG, BMP, TIFF, ...)") from None
    width, height = image.size
    if width * height > MAX_PIXELS:
        raise DataError(f"{too_large} ({width}x{height} px)")
    if min(width, height) < MIN_SIDE:
        raise DataError(
            f"{where}: image is {width}x{height} px; the captioner needs at least {MIN_SIDE}x{MIN_SIDE}"
        )
    try:
        image.load()
    except (OSError, SyntaxError, ValueError) as exc:
        raise DataError(f"{where}: the image data is damaged or truncated ({exc})") from None
    return image


def _eight_bit(image):  # type: ignore[no-untyped-def]
    """Any Pillow mode -> 'L' or 'RGB' (see the module docstring for each conversion)."""
    from PIL import Image

    if image.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        values = np.asarray(image, dtype=np.float64)
        top = 65535.0 if image.mode.startswith("I;16") or values.max() > 255 else 255.0
        if image.mode == "I" and values.max() > 65535:
            top = float(2**32 - 1)
        return Image.fromarray(np.clip(np.round(values * 255.0 / top), 0, 255).astype(np.uint8), "L")
    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        black = Image.new("RGBA", rgba.size, (0, 0, 0, 255))
        return Image.alpha_composite(black, rgba).convert("RGB")
    if image.mode in ("L", "RGB"):
        return image
    return image.convert("RGB")


def image_array(
    data: bytes, where: str, channels: int, height: int | None, width: int | None
) -> tuple[np.ndarray, tuple[int, int]]:
    """Decoded, converted and resized: (C, height, width) float32 in [0, 1] (height, width None: as
    given), and the original (H, W)."""
    from PIL import Image

    image = _eight_bit(_open(data, where))
    image = image.convert("L" if channels == 1 else "RGB")
    size = (image.size[1], image.size[0])
    height, width = height or size[0], width or size[1]
    if image.size != (width, height):
        image = image.resize((width, height), Image.Resampling.BILINEAR)
    array = np.asarray(image, dtype=np.float32) / 255.0
    array = array[None] if channels == 1 else array.transpose(2, 0, 1)
    return np.ascontiguousarray(array), size


def read_image(
    path: str | Path, channels: int, height: int | None, width: int | None
) -> tuple[np.ndarray, tuple[int, int]]:
    """``image_array`` of a file; a missing or unreadable file is one line naming it."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except IsADirectoryError:
        raise DataError(f"{path}: is a folder, not an image") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror})") from None
    return image_array(data, str(path), channels, height, width)


def png_bytes(image: np.ndarray) -> bytes:
    """(H, W) or (H, W, 3) uint8 -> PNG bytes."""
    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(image).save(out, format="PNG")
    return out.getvalue()


def fit_array(image: np.ndarray, channels: int, height: int, width: int) -> np.ndarray:
    """An 8-bit (H, W) or (H, W, 3) array -> (C, height, width) float32 in [0, 1] (as ``image_array``)."""
    if image.ndim == 2 and channels == 1 and image.shape == (height, width):
        return (image.astype(np.float32) / 255.0)[None]

    return image_array(png_bytes(image), "array", channels, height, width)[0]
