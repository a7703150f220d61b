"""The digit-string generator: deterministic, boxes that hold the glyphs, splits that share no glyph."""

from __future__ import annotations

import numpy as np
import pytest

from attnkit.datasets import digits

# The canonical splits' fingerprints (docs/digits.md); a change to the generator changes them.
CHECKSUMS = {
    "dev": "186e2ce252635cfd30f56d5b38c0082e77600052c2a1e2bfddc11acfe0c6627f",
    "test": "ca6f878fd3b08d5c29ceb58e8461743f94afb714058170efe19834166d7650be",
}


def test_the_same_seed_draws_the_same_images_and_another_seed_others():
    a, b = digits.digit_strings("dev", 5), digits.digit_strings("dev", 5)
    assert digits.checksum(a) == digits.checksum(b)
    assert digits.checksum(digits.digit_strings("dev", 5, seed=7)) != digits.checksum(a)
    # image i does not depend on how many are drawn
    assert digits.checksum(digits.digit_strings("dev", 2, start=3)) == digits.checksum(a[3:5])


@pytest.mark.parametrize("split", ["dev", "test"])
def test_canonical_splits_match_their_documented_checksums(split):
    assert digits.checksum(digits.digit_strings(split, digits.SIZES[split])) == CHECKSUMS[split]


def test_images_follow_the_spec_and_boxes_contain_every_glyph_pixel():
    for s in digits.digit_strings("train", 200, seed=3):
        assert s.image.shape == (48, 192) and s.image.dtype == np.uint8
        assert 2 <= len(s.digits) <= 6 and len(s.boxes) == len(s.digits)
        covered = np.zeros_like(s.image, dtype=bool)
        for top, left, bottom, right in s.boxes:
            side = bottom - top
            assert right - left == side and 16 <= side <= 24
            assert top >= 0 and bottom <= 48 and left >= 0 and right <= 192
            assert s.image[top:bottom, left:right].max() > 0  # the glyph is drawn in its box
            covered[top:bottom, left:right] = True
        assert not (s.image[~covered] > 0).any()  # no ink outside the boxes
        assert s.caption.split() == [digits.WORDS[d] for d in s.digits]


def test_gaps_are_zero_to_six_pixels():
    for s in digits.digit_strings("dev", 100):
        gaps = [b[1] - a[3] for a, b in zip(s.boxes, s.boxes[1:])]
        assert all(0 <= g <= 6 for g in gaps)


def test_splits_share_no_glyph_and_cover_all_classes():
    parts = {name: set(digits.glyph_split(name).tolist()) for name in digits.SPLITS}
    assert not parts["train"] & parts["dev"] and not parts["train"] & parts["test"]
    assert not parts["dev"] & parts["test"]
    assert sum(len(p) for p in parts.values()) == 1797
    _, labels = digits.glyphs()
    for name, glyphs in parts.items():
        assert set(labels[sorted(glyphs)].tolist()) == set(range(10)), name
    assert len(parts["dev"]) == len(parts["test"]) == 250


def test_glyph_values_are_scaled_to_eight_bits():
    images, _ = digits.glyphs()
    assert images.dtype == np.uint8 and images.max() == 255 and images.min() == 0
