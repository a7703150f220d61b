"""The tutorial's classes, positional encodings, pooling, hierarchy and entropy."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnkit import reference
from attnkit.attention import (
    AttentionPooling,
    BahdanauAttention,
    CrossAttention,
    HierarchicalAttention,
    LuongAttention,
    PositionAwareAttention,
    SelfAttention,
    SinusoidalPositionalEncoding,
    attention_entropy,
    calculate_attention_weights,
    masked_softmax,
    scaled_dot_product_attention,
)


def test_tutorial_signatures():
    dec, enc = torch.randn(2, 8), torch.randn(2, 5, 8)
    context, weights = BahdanauAttention(8)(dec, enc)
    assert context.shape == (2, 8) and weights.shape == (2, 5)
    for method in ("dot", "general", "concat"):
        context, weights = LuongAttention(8, method=method)(dec, enc)
        assert context.shape == (2, 8) and weights.shape == (2, 5)
    with pytest.raises(ValueError, match="valid: concat, dot, general"):
        LuongAttention(8, method="cosine")
    w = calculate_attention_weights(dec, enc, temperature=2.0)
    assert w.shape == (2, 5)
    torch.testing.assert_close(w, torch.softmax(torch.einsum("bd,bsd->bs", dec, enc) / 2.0, -1))


def test_scaled_dot_product_matches_reference_and_mask():
    q, k, v = torch.randn(2, 4, 8), torch.randn(2, 6, 8), torch.randn(2, 6, 3)
    mask = torch.ones(2, 1, 6, dtype=torch.bool)
    mask[0, :, 3:] = False
    out, w = scaled_dot_product_attention(q, k, v, mask)
    ref_scores = reference.scaled_dot_scores(q.double().numpy(), k.double().numpy())
    ref_out, ref_w = reference.attend(ref_scores, v.double().numpy(), mask.numpy())
    np.testing.assert_allclose(out.numpy(), ref_out, atol=1e-5)
    np.testing.assert_allclose(w.numpy(), ref_w, atol=1e-6)
    with pytest.raises(ValueError, match="equal rank"):
        scaled_dot_product_attention(q, k[0], v)


def test_self_attention_dropout_rescales_and_causal():
    torch.manual_seed(0)
    attn = SelfAttention(16, dropout_rate=0.5, causal=True)
    x = torch.randn(64, 6, 16)
    attn.eval()
    ref, w = attn(x)
    assert torch.triu(w[0], diagonal=1).abs().sum() == 0
    attn.train()
    runs = torch.stack([attn(x)[0] for _ in range(200)]).mean(0)
    # Inverted dropout keeps the expectation: mean over many dropout masks approaches eval output.
    assert (runs - ref).abs().mean() < 0.1 * ref.abs().mean()


def test_cross_attention_shapes_and_mask():
    attn = CrossAttention(8)
    q, kv = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
    out, w = attn(q, kv, kv, mask)
    assert out.shape == (2, 3, 8) and w.shape == (2, 3, 5)
    assert (w[0, :, 3:] == 0).all()
    with pytest.raises(ValueError, match="key width D"):
        attn(q, torch.randn(2, 5, 4), kv)


def test_position_aware_any_length_and_positions_matter():
    attn = PositionAwareAttention(8)
    q, kv = torch.randn(1, 2, 8), torch.randn(1, 3000, 8)  # longer than any fixed table
    out, w = attn(q, kv, kv)
    assert out.shape == (1, 2, 8) and w.shape == (1, 2, 3000)
    short = torch.randn(1, 4, 8)
    _, w1 = attn(q, short, short)
    _, w2 = attn(q, short, short, positions=torch.tensor([3, 2, 1, 0]))
    assert not torch.allclose(w1, w2)


def test_sinusoidal_matches_reference_and_grows():
    pe = SinusoidalPositionalEncoding(8, initial_length=4)
    np.testing.assert_allclose(pe.encodings(10).numpy(), reference.sinusoidal(10, 8), atol=1e-6)
    x = torch.zeros(2, 12, 8)
    np.testing.assert_allclose(pe(x, offset=3)[0].numpy(), reference.sinusoidal(15, 8)[3:], atol=1e-6)


def test_attention_pooling_zero_on_padding_and_reference():
    pool = AttentionPooling(6, 4)
    states = torch.randn(3, 5, 6)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0], [0, 0, 0, 0, 0]], dtype=torch.bool)
    ctx, w = pool(states, mask)
    assert (w[1, 2:] == 0).all() and (w[2] == 0).all() and (ctx[2] == 0).all()
    p = {n: t.detach().double().numpy() for n, t in pool.named_parameters()}
    ref_ctx, ref_w = reference.attention_pooling(
        states.double().numpy(), p["proj.weight"], p["proj.bias"], p["context_vector"], mask.numpy()
    )
    np.testing.assert_allclose(w.detach().numpy(), ref_w, atol=1e-6)
    np.testing.assert_allclose(ctx.detach().numpy(), ref_ctx, atol=1e-5)


def test_hierarchical_attention_padding_sentences_get_zero():
    han = HierarchicalAttention(8, 8, 5)
    words = torch.randn(2, 3, 4, 8)
    mask = torch.ones(2, 3, 4, dtype=torch.bool)
    mask[0, 2] = False  # padding sentence
    mask[1, :, 3] = False  # padding word
    out = han(words, mask)
    assert out.logits.shape == (2, 5) and out.sentence_weights.shape == (2, 3)
    assert out.sentence_weights[0, 2] == 0 and (out.word_weights[1, :, 3] == 0).all()
    torch.testing.assert_close(out.sentence_weights.sum(-1), torch.ones(2))
    torch.testing.assert_close(out.probabilities.sum(-1), torch.ones(2))


@pytest.mark.parametrize(
    "weights,expected",
    [([1.0, 0.0, 0.0], 0.0), ([0.5, 0.5, 0.0], math.log(2)), ([0.25] * 4, math.log(4))],
)
def test_entropy_hand_computed(weights, expected):
    per, mean = attention_entropy(torch.tensor([[weights]]))
    assert per.shape == (1, 1)
    assert mean.item() == pytest.approx(expected, abs=1e-6)


def test_entropy_excludes_padding_queries():
    w = torch.tensor([[[0.5, 0.5], [1.0, 0.0], [0.0, 0.0]]])
    _, mean = attention_entropy(w, mask=torch.tensor([[True, True, True]]))
    assert mean.item() == pytest.approx(math.log(2) / 2)  # the all-zero row is excluded
    _, mean = attention_entropy(w, mask=torch.tensor([[True, False, False]]))
    assert mean.item() == pytest.approx(math.log(2))
    np.testing.assert_allclose(attention_entropy(w)[0].numpy()[0, :2], reference.entropy(w.numpy())[0, :2])


@settings(max_examples=40, deadline=None)
@given(
    rows=st.integers(1, 4),
    cols=st.integers(1, 7),
    scale=st.sampled_from([1.0, 1e2, 1e4]),
    temp=st.floats(0.1, 5.0),
    seed=st.integers(0, 10_000),
)
def test_property_masked_softmax_matches_reference(rows, cols, scale, temp, seed):
    g = torch.Generator().manual_seed(seed)
    scores = torch.randn(rows, cols, generator=g, dtype=torch.float64) * scale
    mask = torch.rand(rows, cols, generator=g) > 0.3
    w = masked_softmax(scores, mask, temp)
    np.testing.assert_allclose(w.numpy(), reference.softmax(scores.numpy(), mask.numpy(), temp), atol=1e-9)


def test_attention_pooling_on_real_tokens_equals_padded_pooling():
    torch.manual_seed(3)
    pool = AttentionPooling(6, 4)
    states = torch.randn(3, 5, 6)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 0, 1, 0, 0], [0, 0, 0, 0, 0]], dtype=torch.bool)
    padded = pool(states, mask)
    tokens = pool.forward_tokens(states[mask], mask)
    torch.testing.assert_close(tokens.context, padded.context)
    torch.testing.assert_close(tokens.weights, padded.weights)
    assert (tokens.weights[~mask] == 0).all() and (tokens.context[2] == 0).all()
    with pytest.raises(ValueError, match=r"one row per True of mask \(B, L\)"):
        pool.forward_tokens(states[mask][:-1], mask)
    with pytest.raises(ValueError, match=r"expected shape \(T, D\)"):
        pool.forward_tokens(states, mask)
