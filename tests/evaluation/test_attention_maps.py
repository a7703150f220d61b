"""Attention-derived maps: hand-computed cases, explicit re-computations, distributions, bad input."""

import numpy as np
import pytest
import torch

from attnkit.errors import UsageError
from attnkit.explain import attention_maps as am
from attnkit.explain.translator_maps import translator_maps

PAIR = (["the cat sat on the mat ."], ["le chat est assis ."])


def test_rollout_of_two_layers_is_the_hand_computed_product():
    first = np.array([[[1.0, 0.0], [0.5, 0.5]]])  # (H=1, 2, 2)
    second = np.array([[[0.2, 0.8], [0.0, 1.0]]])
    # 0.5 A + 0.5 I: [[1, 0], [.25, .75]] then [[.6, .4], [0, 1]]; product second @ first
    out = am.rollout([am.residual_mix(first), am.residual_mix(second)])
    assert np.allclose(out, [[0.7, 0.3], [0.25, 0.75]])


def test_flow_on_a_tiny_graph_is_the_hand_computed_max_flow():
    # bottom b0, b1; middle m0 -> b0 0.5, b1 0.5; m1 -> b1 1.0; top -> m0 0.4, m1 0.6
    levels = [np.array([[0.5, 0.5], [0.0, 1.0]]), np.array([[0.4, 0.6]])]
    assert np.allclose(am.layered_flow(levels), [[0.4, 1.0]])  # rollout would say 0.2, 0.8
    assert np.allclose(am.rollout(levels), [[0.2, 0.8]])


def test_flow_uses_every_path_and_not_more_than_the_cut():
    # two middle nodes both feed b0; the top's edges (0.3 + 0.3) are the cut
    levels = [np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([[0.3, 0.3]])]
    assert np.allclose(am.layered_flow(levels), [[0.6, 0.0]])


def test_norm_map_equals_the_explicit_sum_over_heads():
    rng = np.random.default_rng(0)
    weights, values = rng.random((2, 3, 4)), rng.normal(size=(2, 4, 5))  # (H, T, S), (H, S, D)
    expected = np.zeros((3, 4))
    for t in range(3):
        for s in range(4):
            expected[t, s] = np.linalg.norm(sum(weights[h, t, s] * values[h, s] for h in range(2)))
    assert np.allclose(am.norm_map(weights, values), expected)


def test_relevance_with_one_cross_layer_is_its_gradient_weighted_map():
    cross = np.array([[0.1, 0.6], [0.3, 0.0]])  # (T, S)
    assert np.allclose(am.relevance([], [np.zeros((2, 2))], [cross]), cross)
    # a 2-layer encoder whose second position passes everything to the first
    encoder = [np.array([[0.0, 0.0], [1.0, 0.0]])] * 2
    out = am.relevance(encoder, [np.zeros((1, 1))], [np.array([[0.0, 1.0]])])
    assert np.allclose(out, [[1.0, 1.0]])  # R^ss = [[1, 0], [2, 1]] -> normalized [[1, 0], [1, 1]]


def test_encoder_decoder_rollout_reads_cross_attention_through_the_encoder():
    enc = [np.eye(2)[None]]  # attention to self only: rollout is the identity
    cross = [np.array([[[0.25, 0.75]]])]  # (H=1, T=1, S=2)
    levels = am.encoder_decoder_levels(enc, [np.ones((1, 1, 1))], cross)
    out = am.rollout(levels)[:1]
    assert np.allclose(out, [[0.125, 0.375]])  # half the residual target stream carries no source


@pytest.fixture(scope="module")
def translators(translator_ckpt, transformer_ckpt):
    from attnkit.api import load_translator

    return {
        "rnn": load_translator(str(translator_ckpt), backend="torch"),
        "transformer": load_translator(str(transformer_ckpt), backend="torch"),
    }


@pytest.mark.parametrize(
    "kind,method",
    [("transformer", m) for m in ("attention", "rollout", "flow", "norm", "grad", "value_zeroing")]
    + [("rnn", m) for m in ("attention", "norm", "grad", "value_zeroing")],
)
def test_every_method_gives_a_distribution_over_the_source(translators, kind, method):
    translator = translators[kind]
    src_p, tgt_p, maps = translator_maps(translator, *PAIR, method)[0]
    forced = translator.forced_attention(*PAIR)[0]
    assert (src_p, tgt_p) == forced[:2] and maps.shape == forced[2].shape
    assert np.allclose(maps.sum(1), 1.0) and (maps >= 0).all()
    if method == "attention":
        assert np.allclose(maps, forced[2], atol=1e-6)


def test_value_zeroing_equals_rerunning_the_layer_without_that_value(translators):
    translator = translators["transformer"]
    model = translator.model
    got = translator_maps(translator, *PAIR, "value_zeroing", layer=0)[0][2]
    src_ids, tgt_ids = translator.pair_ids(*PAIR)
    from attnkit.data.batching import make_batch

    batch = make_batch(src_ids, tgt_ids)
    with torch.no_grad():
        trace = model.trace(model.source_embedding(batch.src), batch.src_mask, batch.tgt_in)
        layer, before = model.decoder[0], trace.passes[0].before_cross
        kv = layer.cross_attn.project_kv(trace.memory, trace.memory)
        mask = batch.src_mask.unsqueeze(1)
        full = layer.finish(before + layer.cross_attn(layer.cross_norm(before), kv=kv, mask=mask)[0])
        raw = np.zeros(got.shape)
        for j in range(got.shape[1]):
            kv.value[:, :, j] = 0
            zeroed = layer.finish(before + layer.cross_attn(layer.cross_norm(before), kv=kv, mask=mask)[0])
            raw[:, j] = 1 - torch.nn.functional.cosine_similarity(full[0], zeroed[0], dim=-1).numpy()
            kv = layer.cross_attn.project_kv(trace.memory, trace.memory)
    assert np.allclose(got, am.normalize_rows(raw), atol=2e-4)  # float32 distances of ~1e-4


def test_norm_with_one_head_equals_weights_times_value_norms(translators):
    translator = translators["transformer"]
    model = translator.model
    got = translator_maps(translator, *PAIR, "norm", layer=1, heads=[1])[0][2]
    src_ids, tgt_ids = translator.pair_ids(*PAIR)
    from attnkit.data.batching import make_batch

    batch = make_batch(src_ids, tgt_ids)
    with torch.no_grad():
        trace = model.trace(model.source_embedding(batch.src), batch.src_mask, batch.tgt_in)
        attn = model.decoder[1].cross_attn
        values = attn.value_outputs(attn.project_kv(trace.memory, trace.memory).value)[0, 1]  # (S, D)
        weights = trace.passes[1].cross[0, 1]  # (T, S)
    assert np.allclose(got, am.normalize_rows((weights * values.norm(dim=-1)).numpy()), atol=1e-5)


@pytest.mark.parametrize(
    "kind,method,kwargs,message",
    [
        ("rnn", "rollout", {}, "does not apply to .*RNN translator"),
        ("rnn", "flow", {}, "does not apply to .*RNN translator"),
        ("transformer", "sharpest", {}, "unknown attention map 'sharpest'; valid: attention, rollout"),
        ("transformer", "rollout", {"layer": 0}, "--layer/--heads do not apply"),
        ("transformer", "norm", {"layer": 5}, "layer 5 out of range: the model has 2 decoder layers"),
        ("transformer", "norm", {"heads": [2]}, "heads [2] out of range 0..1"),
    ],
)
def test_methods_that_do_not_apply_are_one_line_errors(translators, kind, method, kwargs, message):
    with pytest.raises(UsageError, match=message.replace("[", r"\[").replace("]", r"\]")):
        translator_maps(translators[kind], *PAIR, method, **kwargs)


def test_batched_relevance_equals_each_pair_alone():
    from attnkit.explain.translator_maps import relevance_batch

    rng = np.random.default_rng(3)
    lengths, big_t, big_s = [(3, 4), (5, 2)], 5, 4
    enc, dec, cross = (
        [rng.random((2, n, m)) for _ in range(2)] for n, m in ((big_s, big_s), (big_t, big_t), (big_t, big_s))
    )
    for b, (t, s) in enumerate(lengths):  # padding rows and columns are zero, as the caller masks them
        for a in enc:
            a[b, s:], a[b, :, s:] = 0, 0
        for a in dec:
            a[b, t:], a[b, :, t:] = 0, 0
        for a in cross:
            a[b, t:], a[b, :, s:] = 0, 0
    as_torch = lambda xs: [torch.tensor(x, dtype=torch.float32) for x in xs]  # noqa: E731
    batched = relevance_batch(as_torch(enc), as_torch(dec), as_torch(cross)).numpy()
    for b, (t, s) in enumerate(lengths):
        alone = am.relevance(
            [a[b, :s, :s] for a in enc], [a[b, :t, :t] for a in dec], [a[b, :t, :s] for a in cross]
        )
        np.testing.assert_allclose(batched[b, :t, :s], alone, rtol=1e-5, atol=1e-6)
