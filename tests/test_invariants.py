"""Results cannot be built wrong: each result type's constructor checks its invariants, and breaking
them is a bug (``InvariantError``: not a user error, so the CLI shows its traceback and exits 1)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attnkit.caption_base import Caption
from attnkit.errors import AttnkitError, InvariantError
from attnkit.results import Classification, Translation

ROWS = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]], dtype=np.float32)  # (T, S) = (2, 3)


def _translation(**changes):
    base = dict(source="a b", translation="x", source_tokens=["a", "b", "</s>"], target_tokens=["x", "</s>"])
    return Translation(**{**base, "attention": ROWS, "score": -1.0, **changes})


def test_a_valid_translation_builds_and_replace_checks_again():
    r = _translation(target_ids=[7])
    with pytest.raises(
        InvariantError, match="must be \\(3, 3\\) \\(target x source tokens\\), got \\(2, 3\\)"
    ):
        dataclasses.replace(r, target_tokens=["x", "y", "</s>"])  # a step that rebuilt it from pieces


@pytest.mark.parametrize(
    "changes,message",
    [
        ({"attention": ROWS[:1]}, "must be \\(2, 3\\)"),
        ({"attention": ROWS * 2}, "row 0 sums to 2.0000"),
        ({"attention": -ROWS}, "negative"),
        ({"attention": ROWS * np.nan}, "non-finite"),
        ({"target_ids": [1, 2, 3]}, "3 target ids for 2 target tokens"),
        ({"alternatives": ["y"]}, "1 alternatives but 0 scores"),
        (
            {
                "alternatives": ["y"],
                "alternative_scores": [-2.0],
                "alternative_tokens": [["y", "</s>"]],
                "alternative_attention": [ROWS[:1]],
            },
            "alternative 1's attention must be \\(2, 3\\)",
        ),
        ({"score": float("nan")}, "non-finite model score"),
    ],
)
def test_a_translation_that_breaks_an_invariant_is_a_bug(changes, message):
    with pytest.raises(InvariantError, match=message):
        _translation(**changes)
    assert not issubclass(InvariantError, AttnkitError)


def test_an_empty_translation_carries_no_attention():
    Translation("", "", [], [], np.zeros((0, 0), np.float32), 0.0)
    with pytest.raises(InvariantError, match="empty translation carries attention"):
        Translation("", "", [], [], ROWS, 0.0)


def test_classifications_check_words_weights_and_probabilities():
    ok = dict(text="a b. c", label="1", probabilities={"1": 0.7, "2": 0.3}, sentences=[["a", "b"], ["c"]])
    Classification(**ok, sentence_weights=[0.6, 0.4], word_weights=[[0.5, 0.5], [1.0]])
    with pytest.raises(InvariantError, match="sentence 1: 2 words but 1 word weights"):
        Classification(**ok, sentence_weights=[0.6, 0.4], word_weights=[[1.0], [1.0]])
    with pytest.raises(InvariantError, match="class probabilities: row 0 sums to 0.5"):
        Classification(
            **{**ok, "probabilities": {"1": 0.2, "2": 0.3}},
            sentence_weights=[0.6, 0.4],
            word_weights=[[0.5, 0.5], [1.0]],
        )
    with pytest.raises(InvariantError, match="label '3' is not one of"):
        Classification(**{**ok, "label": "3"}, sentence_weights=[0.6, 0.4], word_weights=[[0.5, 0.5], [1.0]])


def test_captions_check_one_distribution_over_the_grid_per_token():
    grid = np.full((2, 2), 0.25, dtype=np.float32)
    Caption("1 2", ["1", "2"], -1.0, np.stack([grid, grid]), grid, (8, 8))
    with pytest.raises(InvariantError, match="attention must be \\(2, 2, 2\\)"):
        Caption("1 2", ["1", "2"], -1.0, np.stack([grid]), grid, (8, 8))
    with pytest.raises(InvariantError, match="caption attention: row 1 sums to 2"):
        Caption("1 2", ["1", "2"], -1.0, np.stack([grid, grid * 2]), grid, (8, 8))
