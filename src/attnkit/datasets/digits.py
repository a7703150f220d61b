"""Digit strings: a captioning task made of real handwriting whose ground truth says where each object is.

The glyphs are the 1,797 UCI handwritten digits that scikit-learn ships (``sklearn.datasets.load_digits``,
8x8, values 0..16; Alpaydin and Kaynak 1998, UCI Machine Learning Repository, CC BY 4.0). The task, as
``docs/digits.md`` specifies it so that other code can generate the same images:

- canvas 48 px high x 192 px wide, 8-bit grayscale, background 0, white digits;
- 2 to 6 digits, each one glyph (values scaled to 0..255) resized with Pillow's bilinear filter to a
  square of side s drawn uniformly from 16..24 px, placed left to right with gaps of 0..6 px from a random
  start so that all fit, each at a random vertical position inside the canvas; overlapping pixels take
  the maximum;
- caption: the digits as English words separated by spaces ("three one four"), with each digit's box;
- splits by glyph: train, dev and test use disjoint glyphs (``glyph_split``); image ``i`` of a split is
  drawn from ``numpy.random.default_rng([seed, i])``, so it does not depend on how many are generated.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..errors import UsageError

HEIGHT, WIDTH = 48, 192
MIN_DIGITS, MAX_DIGITS = 2, 6
MIN_SIDE, MAX_SIDE = 16, 24
MAX_GAP = 6
WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
SPLITS = ("train", "dev", "test")
SPLIT_SEED = 2015  # the glyph permutation (Xu et al.'s year)
HELD_OUT_PER_CLASS = 25  # glyphs of each digit in dev and in test: 250 each, the other 1,297 train
SEEDS = {"train": 0, "dev": 1, "test": 2}  # the image seed of each split (training adds its epoch)
SIZES = {"dev": 1000, "test": 1000}  # the canonical evaluation sets


@dataclass(frozen=True)
class DigitString:
    """One image and its caption. image (48, 192) uint8; boxes: per digit (top, left, bottom, right),
    bottom and right exclusive; digits: the class of each, left to right."""

    image: np.ndarray
    digits: tuple[int, ...]
    boxes: tuple[tuple[int, int, int, int], ...]

    @property
    def caption(self) -> str:
        return " ".join(WORDS[d] for d in self.digits)


@lru_cache(maxsize=1)
def glyphs() -> tuple[np.ndarray, np.ndarray]:
    """The UCI glyphs scaled to 0..255 (1797, 8, 8) uint8 and their classes (1797,)."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise UsageError(
            "the digit-string generator reads scikit-learn's bundled digits: pip install scikit-learn"
        ) from None
    data = load_digits()
    images = np.round(np.asarray(data.images, dtype=np.float64) * 255.0 / 16.0).astype(np.uint8)
    return images, np.asarray(data.target, dtype=np.int64)


@lru_cache(maxsize=3)
def glyph_split(split: str) -> np.ndarray:
    """The glyph indices of ``split`` (sorted): per class, a fixed permutation gives 25 to dev, the next 25
    to test and the rest to train, so no glyph is in two splits and every class is in each."""
    if split not in SPLITS:
        raise UsageError(f"unknown split {split!r}; valid: {', '.join(SPLITS)}")
    _, labels = glyphs()
    rng = np.random.default_rng(SPLIT_SEED)
    chosen: list[np.ndarray] = []
    n = HELD_OUT_PER_CLASS
    for digit in range(10):
        members = rng.permutation(np.flatnonzero(labels == digit))
        part = {"dev": members[:n], "test": members[n : 2 * n], "train": members[2 * n :]}[split]
        chosen.append(part)
    return np.sort(np.concatenate(chosen))


def _resize(glyph: np.ndarray, side: int) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.fromarray(glyph).resize((side, side), Image.Resampling.BILINEAR))


def draw(rng: np.random.Generator, pool: np.ndarray) -> DigitString:
    """One digit string from the glyphs in ``pool``, by the rules in the module docstring."""
    images, labels = glyphs()
    count = int(rng.integers(MIN_DIGITS, MAX_DIGITS + 1))
    chosen = rng.choice(pool, size=count)
    sides = rng.integers(MIN_SIDE, MAX_SIDE + 1, size=count)
    gaps = rng.integers(0, MAX_GAP + 1, size=count - 1)
    width = int(sides.sum() + gaps.sum())
    left = int(rng.integers(0, WIDTH - width + 1))
    canvas = np.zeros((HEIGHT, WIDTH), dtype=np.uint8)
    boxes = []
    for i, (glyph, side) in enumerate(zip(chosen.tolist(), sides.tolist())):
        top = int(rng.integers(0, HEIGHT - side + 1))
        box = (top, left, top + side, left + side)
        region = canvas[top : top + side, left : left + side]
        np.maximum(region, _resize(images[glyph], side), out=region)
        boxes.append(box)
        left += side + (int(gaps[i]) if i < count - 1 else 0)
    return DigitString(canvas, tuple(int(labels[g]) for g in chosen.tolist()), tuple(boxes))


def digit_strings(split: str, count: int, seed: int | None = None, start: int = 0) -> list[DigitString]:
    """Images ``start .. start + count`` of ``split`` (its glyphs; seed: the split's own unless given)."""
    pool = glyph_split(split)
    base = SEEDS[split] if seed is None else seed
    return [draw(np.random.default_rng([base, i]), pool) for i in range(start, start + count)]


def checksum(strings: list[DigitString]) -> str:
    """SHA-256 over images, digits and boxes: the split's fingerprint, documented in docs/digits.md."""
    digest = hashlib.sha256()
    for s in strings:
        digest.update(s.image.tobytes())
        digest.update(np.asarray(s.digits, dtype=np.int64).tobytes())
        digest.update(np.asarray(s.boxes, dtype=np.int64).tobytes())
    return digest.hexdigest()
