"""MultiHeadAttention: fused == eager, == torch.nn.MultiheadAttention, == NumPy reference."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attnkit import reference
from attnkit.attention import KeyValue, MultiHeadAttention, causal_mask, key_padding_to_attn_mask

B, T, S, D, H = 2, 5, 7, 16, 4


def _data(seed=0):
    g = torch.Generator().manual_seed(seed)
    q, kv = torch.randn(B, T, D, generator=g), torch.randn(B, S, D, generator=g)
    pad = torch.zeros(B, S, dtype=torch.bool)
    pad[1, 4:] = True  # nn.MultiheadAttention polarity: True = ignore
    return q, kv, pad


def _copy_into_torch(ours: MultiHeadAttention) -> torch.nn.MultiheadAttention:
    ref = torch.nn.MultiheadAttention(D, H, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(
            torch.cat([ours.query_proj.weight, ours.key_proj.weight, ours.value_proj.weight])
        )
        ref.in_proj_bias.copy_(torch.cat([ours.query_proj.bias, ours.key_proj.bias, ours.value_proj.bias]))
        ref.out_proj.weight.copy_(ours.out_proj.weight)
        ref.out_proj.bias.copy_(ours.out_proj.bias)
    return ref


def test_equals_torch_multihead_attention_given_same_weights():
    ours = MultiHeadAttention(D, H).eval()
    ref = _copy_into_torch(ours).eval()
    q, kv, pad = _data()
    out, w = ours(q, kv, kv, mask=key_padding_to_attn_mask(pad), need_weights=True)
    ref_out, ref_w = ref(q, kv, kv, key_padding_mask=pad, need_weights=True, average_attn_weights=False)
    torch.testing.assert_close(out, ref_out, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(w, ref_w, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("causal", [False, True])
def test_fused_and_eager_paths_agree(causal):
    mha = MultiHeadAttention(D, H).eval()
    q, _, pad = _data()
    x = torch.randn(B, S, D)
    mask = key_padding_to_attn_mask(pad)
    eager, w = mha(x, x, x, mask=mask, need_weights=True, is_causal=causal)
    fused, none = mha(x, x, x, mask=mask, need_weights=False, is_causal=causal)
    assert none is None and w.shape == (B, H, S, S)
    torch.testing.assert_close(eager, fused, atol=1e-5, rtol=1e-5)


def test_fused_path_fully_masked_row_is_zero_not_nan():
    mha = MultiHeadAttention(D, H).eval()
    q, kv, _ = _data()
    mask = torch.ones(B, T, S, dtype=torch.bool)
    mask[0, 1] = False
    for need in (True, False):
        q.grad = None
        qq = q.clone().requires_grad_(True)
        out, _ = mha(qq, kv, kv, mask=mask, need_weights=need)
        out.sum().backward()
        assert torch.isfinite(out).all() and torch.isfinite(qq.grad).all()
        torch.testing.assert_close(out[0, 1], mha.out_proj.bias)  # zero context -> bias only


def test_matches_numpy_reference():
    mha = MultiHeadAttention(D, H).eval()
    q, kv, pad = _data()
    mask = key_padding_to_attn_mask(pad)
    out, w = mha(q, kv, kv, mask=mask)
    params = {}
    for short, name in (("q", "query_proj"), ("k", "key_proj"), ("v", "value_proj"), ("o", "out_proj")):
        linear = getattr(mha, name)
        params[f"w_{short}"] = linear.weight.detach().double().numpy()
        params[f"b_{short}"] = linear.bias.detach().double().numpy()
    ref_out, ref_w = reference.multi_head(
        q.double().numpy(), kv.double().numpy(), kv.double().numpy(), params, H, mask.numpy()[:, None]
    )
    np.testing.assert_allclose(out.detach().numpy(), ref_out, atol=1e-5)
    np.testing.assert_allclose(w.detach().numpy(), ref_w, atol=1e-5)


def test_cached_kv_incremental_equals_full_causal():
    mha = MultiHeadAttention(D, H).eval()
    x = torch.randn(B, T, D)
    full, _ = mha(x, x, x, is_causal=True)
    cache: KeyValue | None = None
    steps = []
    for t in range(T):
        new = mha.project_kv(x[:, t : t + 1], x[:, t : t + 1])
        cache = new if cache is None else cache.append(new)
        out, _ = mha(x[:, t : t + 1], kv=cache)
        steps.append(out)
    torch.testing.assert_close(torch.cat(steps, 1), full, atol=1e-5, rtol=1e-5)


def test_dropout_only_in_training():
    mha = MultiHeadAttention(D, H, dropout=0.5)
    q, kv, _ = _data()
    mha.eval()
    a, _ = mha(q, kv, kv)
    b, _ = mha(q, kv, kv)
    torch.testing.assert_close(a, b)
    mha.train()
    c, _ = mha(q, kv, kv)
    assert not torch.allclose(a, c)


def test_bad_input_names_shapes():
    mha = MultiHeadAttention(D, H)
    with pytest.raises(ValueError, match=r"query.*\(B, T, D\).*got \(2, 16\)"):
        mha(torch.randn(2, D), torch.randn(2, 3, D), torch.randn(2, 3, D))
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadAttention(10, 3)
    with pytest.raises(ValueError, match="bool"):
        mha(torch.randn(2, 3, D), torch.randn(2, 3, D), torch.randn(2, 3, D), mask=torch.ones(3, 3))


def test_causal_mask_shape_and_values():
    m = causal_mask(3)
    assert m.tolist() == [[True, False, False], [True, True, False], [True, True, True]]


@settings(max_examples=30, deadline=None)
@given(
    batch=st.integers(1, 3),
    tgt=st.integers(1, 6),
    src=st.integers(1, 6),
    heads=st.sampled_from([1, 2, 4]),
    seed=st.integers(0, 1000),
)
def test_property_weights_distribution_under_random_masks(batch, tgt, src, heads, seed):
    g = torch.Generator().manual_seed(seed)
    mha = MultiHeadAttention(8, heads).eval()
    q, kv = torch.randn(batch, tgt, 8, generator=g), torch.randn(batch, src, 8, generator=g)
    mask = torch.rand(batch, tgt, src, generator=g) > 0.4
    out, w = mha(q, kv, kv, mask=mask)
    fused, _ = mha(q, kv, kv, mask=mask, need_weights=False)
    assert torch.isfinite(out).all()
    sums = w.sum(-1)  # (B, H, T)
    has_key = mask.any(-1).unsqueeze(1).expand_as(sums)
    torch.testing.assert_close(sums[has_key], torch.ones_like(sums[has_key]))
    assert (sums[~has_key] == 0).all()
    assert (w.masked_select(~mask.unsqueeze(1).expand_as(w)) == 0).all()
    torch.testing.assert_close(out, fused, atol=1e-5, rtol=1e-5)
