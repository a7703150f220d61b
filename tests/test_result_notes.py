"""What a result tells its reader about itself (issue 41): a translation that stopped early or at the
length limit, a digit drawn black on white, a gold file naming a pair that is not there."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

from attnkit.alignment.links import parse_naacl
from attnkit.errors import DataError
from attnkit.results import Translation
from attnkit.translate_base import stop_notes

LONG = (
    "When the old man finally arrived at the station after walking for hours through the rain, he "
    "discovered that the last train had already left, so he sat down on a wooden bench, opened the small "
    "bag that his daughter had packed for him that morning, and ate the bread and cheese slowly while he "
    "watched the lights of the town go out one by one across the valley."
)


def _translation(n_src: int, n_tgt: int) -> Translation:
    attention = np.full((n_tgt + 1, n_src + 1), 1.0 / (n_src + 1), dtype=np.float32)
    return Translation(
        "s",
        "t",
        [f"s{j}" for j in range(n_src)] + ["</s>"],
        [f"t{i}" for i in range(n_tgt)] + ["</s>"],
        attention,
        -1.0,
        source_ids=list(range(4, 4 + n_src)),
        target_ids=list(range(4, 4 + n_tgt)),
    )


@pytest.mark.parametrize(
    ("n_src", "n_tgt", "expected"),
    [(10, 4, None), (20, 20, None), (20, 11, "may have stopped early"), (4, 17, "length limit")],
)
def test_stop_notes_name_a_short_or_cut_translation(n_src, n_tgt, expected):
    notes = stop_notes(_translation(n_src, n_tgt), 1, 1.5, 10)
    assert (notes == []) if expected is None else (len(notes) == 1 and expected in notes[0])


def test_the_default_says_where_a_long_sentence_ended():
    import attnkit

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = attnkit.load().translate([LONG, "The cat sits on the mat."])
    assert "stopped at the length limit (130 subwords for a source of 79)" in result[0].warnings[0]
    assert result[1].warnings == [] and result[0].to_json()["warnings"] == result[0].warnings
    assert any("stopped at the length limit" in str(w.message) for w in caught)


def test_a_black_on_white_digit_is_inverted_and_says_so():
    from PIL import Image
    from sklearn.datasets import load_digits

    from attnkit.api import load_captioner

    captioner = load_captioner()
    digit = (load_digits().images[3] / 16.0 * 255).astype(np.uint8)
    files = {}
    for name, pixels in (("white-on-black", digit), ("black-on-white", 255 - digit)):
        out = io.BytesIO()
        Image.fromarray(pixels).resize((64, 64), Image.Resampling.NEAREST).save(out, format="PNG")
        files[name] = captioner.load_bytes(out.getvalue(), name)
    plain, inverted = captioner.caption_loaded(list(files.values()), list(files))
    assert plain.warnings == [] and "light background, so the image was inverted" in inverted.warnings[0]
    assert inverted.caption == plain.caption
    np.testing.assert_allclose(inverted.attention, plain.attention, atol=1e-5)


def test_a_gold_link_to_a_missing_pair_names_the_pairs_there_are():
    with pytest.raises(
        DataError, match=r"gold:2: sentence 3 is not one of the pairs: links name sentence 1 \(one pair"
    ):
        parse_naacl("1 1 1 S\n3 1 1 S\n", 1)
    with pytest.raises(DataError, match=r"gold:1: link type 'X' is not S \(sure\) or P \(possible\)"):
        parse_naacl("1 1 1 X\n", 2)
