"""Attention-derived maps of a Hugging Face encoder-decoder: rollout, flow, grad from its returned
attentions; norm and value zeroing refused in one line."""

from __future__ import annotations

import numpy as np
import pytest

from attnkit.api import load_translator
from attnkit.errors import UsageError
from attnkit.explain import attention_maps as am
from attnkit.explain.translator_maps import translator_maps
from tests.hf.tiny import SOURCES, TARGETS


@pytest.fixture(scope="module")
def translator(marian_dir):
    return load_translator(str(marian_dir))


@pytest.mark.parametrize("method", ["attention", "rollout", "flow", "grad"])
def test_maps_are_distributions_shaped_like_the_forced_attention(translator, method):
    maps = translator_maps(translator, SOURCES[:2], TARGETS[:2], method)
    forced = translator.forced_attention(SOURCES[:2], TARGETS[:2])
    for (src_p, tgt_p, m), (fs, ft, fm) in zip(maps, forced):
        assert (src_p, tgt_p) == (fs, ft) and m.shape == fm.shape
        assert np.allclose(m.sum(1), 1.0) and (m >= 0).all()
        if method == "attention":
            assert np.allclose(m, fm, atol=1e-6)


def test_rollout_is_the_product_of_the_models_own_attentions(translator):
    import torch

    got = translator_maps(translator, SOURCES[:1], TARGETS[:1], "rollout")[0][2]
    src_ids, tgt_ids = translator.pair_ids(SOURCES[:1], TARGETS[:1])
    with torch.no_grad():
        out = translator.teacher_forced(src_ids, tgt_ids)
    pick = lambda maps: [m[0].numpy() for m in maps]  # noqa: E731
    levels = am.encoder_decoder_levels(
        pick(out.encoder_attentions), pick(out.decoder_attentions), pick(out.cross_attentions)
    )
    assert np.allclose(got, am.distribution(am.rollout(levels)[: got.shape[0]]), atol=1e-6)


@pytest.mark.parametrize("method", ["norm", "value_zeroing"])
def test_value_based_maps_are_refused_for_hugging_face(translator, method):
    with pytest.raises(UsageError, match=f"{method} does not apply to .*Hugging Face encoder-decoder"):
        translator_maps(translator, SOURCES[:1], TARGETS[:1], method)
