"""Long pairs split and rejoined (``alignment.chunks``): parts at sentence ends when both sides have as
many, proportional cuts otherwise, one block-diagonal matrix per pair, every word reachable."""

import numpy as np
import pytest

from attnkit.alignment import chunks

EN = "the cat sits on the mat ."
FR = "le chat est assis sur le tapis ."


def test_a_short_pair_is_its_own_chunk():
    assert chunks.plan([EN], [FR]) == [(0, 0, 7, 0, 8)]


def test_sentences_are_paired_in_order_when_both_sides_have_as_many():
    src, tgt = " ".join([EN] * 20), " ".join([FR] * 20)  # 140 and 160 words
    cuts = chunks.plan([src], [tgt])
    assert all(b - a <= chunks.CHUNK_WORDS and d - c <= chunks.CHUNK_WORDS for _, a, b, c, d in cuts)
    assert all(
        a % 7 == 0 and c % 8 == 0 and (c // 8) == (a // 7) for _, a, _, c, _ in cuts
    )  # sentence starts
    assert cuts[0][1] == 0 and cuts[-1][2] == 140 and cuts[-1][4] == 160
    assert all(cuts[k][2] == cuts[k + 1][1] and cuts[k][4] == cuts[k + 1][3] for k in range(len(cuts) - 1))


def test_one_long_sentence_is_cut_at_the_same_fraction_and_at_its_commas():
    src = " , ".join(["a b c d e f g h"] * 12)  # one sentence of 107 words, commas every 9
    tgt = " , ".join(["u v w x y z"] * 12)
    cuts = chunks.plan([src], [tgt])
    assert len(cuts) >= 4 and cuts[-1][2] == len(src.split())
    words_s, words_t = src.split(), tgt.split()
    for _, a, _, c, _ in cuts[1:]:
        assert words_s[a - 1] == "," and words_t[c - 1] == ","  # the n-th comma on both sides
        assert words_s[:a].count(",") == words_t[:c].count(",")


def test_rejoin_puts_each_chunk_on_the_diagonal():
    cuts = [(0, 0, 2, 0, 3), (0, 2, 4, 3, 5)]
    parts = [np.full((3, 2), 1.0), np.full((2, 2), 2.0)]
    (joined,) = chunks.rejoin(parts, cuts, [(5, 4)])
    assert joined.shape == (5, 4)
    assert (joined[:3, :2] == 1).all() and (joined[3:, 2:] == 2).all() and joined[:3, 2:].sum() == 0
    (flipped,) = chunks.rejoin([p.T for p in parts], cuts, [(5, 4)], flip=True)
    assert np.array_equal(flipped, joined.T)


def test_a_1_mb_line_is_bounded_and_said():
    with pytest.warns(UserWarning, match="words past 2000 on a side get no links"):
        cuts = chunks.plan(["w " * 100_000], ["m " * 100_000])
    assert max(b for _, _, b, _, _ in cuts) == chunks.MAX_PAIR_WORDS


def test_a_223_word_pair_gets_links_to_its_last_words():
    import attnkit

    src, tgt = " ".join([EN] * 32)[:-2] + " , end .", " ".join([FR] * 28) + " fin ."
    report = attnkit.align([src], [tgt], "enfr-rnn", "none", scores="attention")
    assert len(src.split()) >= 223
    assert max(s for s, _ in report.links[0]) >= len(src.split()) - 10  # the end is aligned, not cut off
    assert report.probabilities[0].shape == (len(tgt.split()), len(src.split()))


def test_a_pair_past_the_bound_is_split_whole_first_so_its_sentences_still_pair():
    src, tgt = " ".join([EN] * 430), " ".join([FR] * 430)  # 3,010 and 3,440 words
    with pytest.warns(UserWarning, match="words past 2000"):
        cuts = chunks.plan([src], [tgt])
    assert all(
        a // 7 == c // 8 and a % 7 == 0 and c % 8 == 0 for _, a, _, c, _ in cuts
    )  # sentence to sentence
    assert max(b for _, _, b, _, _ in cuts) <= 2000 and max(d for *_, d in cuts) <= 2000
