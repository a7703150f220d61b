"""Contract tests parametrized over the scorer registry: a new scorer is tested automatically."""

import numpy as np
import pytest
import torch

from attnkit import reference
from attnkit.attention import SCORERS, Attention, build_scorer

NAMES = SCORERS.names()
B, T, S, D = 3, 4, 6, 8


def _inputs(dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(B, T, D, generator=g, dtype=dtype)
    k = torch.randn(B, S, D, generator=g, dtype=dtype)
    lengths = torch.tensor([S, 4, 2])
    mask = torch.arange(S).unsqueeze(0) < lengths.unsqueeze(1)  # (B, S)
    return q, k, mask


@pytest.mark.parametrize("name", NAMES)
def test_shapes_single_and_multi_query(name):
    attn = Attention(name, D)
    q, k, mask = _inputs()
    out = attn(q, k, mask=mask)
    assert out.context.shape == (B, T, D) and out.weights.shape == (B, T, S)
    single = attn(q[:, 0], k, mask=mask)
    assert single.context.shape == (B, D) and single.weights.shape == (B, S)
    torch.testing.assert_close(single.weights, out.weights[:, 0])


@pytest.mark.parametrize("name", NAMES)
def test_weights_are_a_distribution_over_unmasked_keys(name):
    q, k, mask = _inputs()
    w = Attention(name, D)(q, k, mask=mask).weights
    assert (w >= 0).all()
    torch.testing.assert_close(w.sum(-1), torch.ones(B, T))
    assert (w.masked_select(~mask.unsqueeze(1).expand_as(w)) == 0).all()


@pytest.mark.parametrize("name", NAMES)
def test_fully_masked_query_gives_zero_weights_and_context(name):
    q, k, _ = _inputs()
    mask = torch.ones(B, T, S, dtype=torch.bool)
    mask[1, 2] = False
    out = Attention(name, D)(q, k, mask=mask)
    assert not torch.isnan(out.context).any()
    assert (out.weights[1, 2] == 0).all() and (out.context[1, 2] == 0).all()


@pytest.mark.parametrize("name", NAMES)
def test_huge_scores_do_not_overflow(name):
    q, k, mask = _inputs()
    out = Attention(name, D)(q * 1e4, k * 1e4, mask=mask)
    assert torch.isfinite(out.weights).all() and torch.isfinite(out.context).all()
    torch.testing.assert_close(out.weights.sum(-1), torch.ones(B, T))


@pytest.mark.parametrize("name", NAMES)
def test_padded_item_equals_item_alone(name):
    torch.manual_seed(0)
    attn = Attention(name, D)
    q, k, mask = _inputs()
    batched = attn(q, k, mask=mask)
    for i, length in enumerate(mask.sum(1).tolist()):
        alone = attn(q[i : i + 1], k[i : i + 1, :length])
        torch.testing.assert_close(alone.context[0], batched.context[i])
        torch.testing.assert_close(alone.weights[0], batched.weights[i, :, :length])


@pytest.mark.parametrize("name", [n for n in NAMES if n != "location"])
def test_permuting_keys_permutes_weights(name):
    # The location scorer attends by position, not content, so it is exempt by design.
    attn = Attention(name, D)
    q, k, _ = _inputs()
    perm = torch.randperm(S)
    base, moved = attn(q, k), attn(q, k[:, perm])
    torch.testing.assert_close(moved.weights, base.weights[:, :, perm])
    torch.testing.assert_close(moved.context, base.context)


@pytest.mark.parametrize("name", NAMES)
def test_gradcheck_and_every_parameter_gets_gradient(name):
    attn = Attention(name, D).double()
    q, k, mask = _inputs(torch.float64)
    q.requires_grad_(True)
    k.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda a, b: attn(a, b, mask=mask).context, (q, k))
    attn(q, k, mask=mask).context.pow(2).sum().backward()
    for pname, p in attn.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, pname


def _reference_scores(name, scorer, q, k):
    p = {n: t.detach().double().numpy() for n, t in scorer.named_parameters()}
    if name == "dot":
        return reference.dot_scores(q, k)
    if name == "scaled_dot":
        return reference.scaled_dot_scores(q, k)
    if name in ("general", "bilinear"):
        return reference.general_scores(q, k, p["key_proj.weight"])
    if name in ("additive", "bahdanau", "concat"):
        return reference.additive_scores(
            q, k, p["query_proj.weight"], p["key_proj.weight"], p["energy.weight"]
        )
    if name == "location":
        return reference.location_scores(
            q, p["query_proj.weight"], p["query_proj.bias"], p["positions.weight"][: k.shape[1]]
        )
    raise AssertionError(f"no reference for scorer {name!r}: add one to attnkit.reference")


@pytest.mark.parametrize("name", NAMES)
def test_matches_numpy_reference(name):
    attn = Attention(name, D, temperature=0.7)
    q, k, mask = _inputs()
    out = attn(q, k, mask=mask)
    qn, kn = q.double().numpy(), k.double().numpy()
    scores = _reference_scores(name, attn.scorer, qn, kn)
    ctx, w = reference.attend(scores, kn, mask.numpy()[:, None, :], temperature=0.7)
    np.testing.assert_allclose(out.weights.detach().numpy(), w, atol=1e-5)
    np.testing.assert_allclose(out.context.detach().numpy(), ctx, atol=1e-5)


@pytest.mark.parametrize("name", NAMES)
def test_bad_shapes_name_expected_and_received(name):
    attn = Attention(name, D)
    with pytest.raises(ValueError, match=r"\(B, S, Dk\).*got \(3, 6\)"):
        attn(torch.randn(B, T, D), torch.randn(B, S))
    with pytest.raises(ValueError, match="query width Dq"):
        attn(torch.randn(B, T, D + 1), torch.randn(B, S, D))


def test_unknown_scorer_lists_valid_names():
    with pytest.raises(ValueError, match="valid names: .*additive.*dot.*general"):
        build_scorer("cosine", D)


def test_temperature_flattens_and_sharpens():
    q, k, _ = _inputs()
    hot = Attention("dot", D, temperature=10.0)(q, k).weights
    cold = Attention("dot", D, temperature=0.1)(q, k).weights
    assert hot.max() < cold.max()
    with pytest.raises(ValueError, match="temperature"):
        Attention("dot", D, temperature=0.0)
