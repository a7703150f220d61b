"""Greedy and beam search: beam 1 == greedy, batch/padding invariance, EOS and length handling."""

import numpy as np
import pytest
import torch

from attnkit.data.batching import make_source
from attnkit.decoding import beam_search, greedy_search
from attnkit.decoding.common import max_lengths
from tests.helpers import random_sequences, tiny_rnn, tiny_transformer

MODELS = {"rnn": tiny_rnn, "transformer": tiny_transformer}
SOURCES = random_sequences(7, seed=5)


def _peaked(model):
    # Random tiny models are nearly uniform; sharpen the output so searches make real choices.
    with torch.no_grad():
        model.embedding.weight.mul_(4.0)
    return model.eval()


@pytest.mark.parametrize("name", MODELS)
def test_beam_one_equals_greedy(name):
    model = _peaked(MODELS[name]())
    src, mask = make_source(SOURCES)
    greedy = greedy_search(model, src, mask)
    beam = beam_search(model, src, mask, beam_size=1)
    for g, (b,) in zip(greedy, beam):
        assert g.tokens == b.tokens
        np.testing.assert_array_equal(g.attention, b.attention)


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("beam", [1, 4])
def test_results_do_not_depend_on_batching(name, beam):
    model = _peaked(MODELS[name]())

    def run(sources):
        src, mask = make_source(sources)
        if beam == 1:
            return [h.tokens for h in greedy_search(model, src, mask)]
        return [h[0].tokens for h in beam_search(model, src, mask, beam_size=beam)]

    alone = [run([s])[0] for s in SOURCES]
    assert run(SOURCES) == alone
    assert run(SOURCES[::-1]) == alone[::-1]
    assert run(SOURCES[:3]) + run(SOURCES[3:]) == alone


@pytest.mark.parametrize("name", MODELS)
def test_beam_attention_rows_are_distributions_over_the_source(name):
    model = _peaked(MODELS[name]())
    src, mask = make_source(SOURCES)
    for hyps, s in zip(beam_search(model, src, mask, beam_size=3, n_best=3), SOURCES):
        assert len(hyps) == 3
        assert [h.score for h in hyps] == sorted((h.score for h in hyps), reverse=True)
        for h in hyps:
            assert h.attention.shape == (len(h.tokens) + 1, len(s) + 1)
            np.testing.assert_allclose(h.attention.sum(-1), np.ones(len(h.tokens) + 1), rtol=1e-5)


def test_length_limit_is_per_sentence():
    model = _peaked(tiny_rnn())
    src, mask = make_source(SOURCES)
    limits = max_lengths(mask, 1.5, 10)
    for h, limit in zip(greedy_search(model, src, mask), limits):
        assert len(h.tokens) <= int(limit)
    with pytest.raises(ValueError, match="n_best"):
        beam_search(model, src, mask, beam_size=2, n_best=3)
