"""Issue 43: attention captured from a decoder-only model's own queries and keys, in chunks, while it runs its
normal attention, equals eager ``output_attentions`` (1e-5) for every family transformers has here; the
aggregates equal the same numbers computed from the full eager matrices; index specs and bad inputs."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnkit.errors import UsageError
from attnkit.hf.capture import Plan, capturing
from attnkit.inspecting import inspect, parse_indices
from tests.hf import causal_families

TEXT = "the cat sits on the mat . where is the dog ? i like tea . le chat est assis sur le tapis . " * 2


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("causal")
    return {f: causal_families.build(f, root / f) for f in causal_families.FAMILIES}


def _eager(folder, ids):
    import transformers

    model = transformers.AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager")
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), output_attentions=True)
    return np.stack([a[0].numpy() for a in out.attentions])  # (L, H, T, T)


@pytest.mark.parametrize("family", list(causal_families.FAMILIES))
def test_captured_rows_and_aggregates_equal_eager_attention(folders, family):
    result = inspect(str(folders[family]), TEXT, layers=":", heads=":", rows="0,3,10:20,-5:", probe=False)
    full = _eager(folders[family], result.ids)
    layers, heads, t, _ = full.shape
    assert t > 40 and result.received.shape == (layers, t)
    for item in result.captured:
        np.testing.assert_allclose(
            item["weights"], full[item["layer"], item["head"], item["rows"]], atol=1e-5
        )
    np.testing.assert_allclose(result.received, full.mean((1, 2)), atol=1e-6)
    rows, keys = np.arange(t)[:, None], np.arange(t)[None, :]
    safe = np.where(full > 0, full, 1.0)
    np.testing.assert_allclose(result.entropy, -(full * np.log(safe)).sum(-1).mean(-1), atol=1e-4)
    np.testing.assert_allclose(result.distance, (full * (rows - keys)).sum(-1).mean(-1), atol=1e-4)
    np.testing.assert_allclose(result.sink, full[..., 4:, :4].sum(-1).mean(-1), atol=1e-5)
    np.testing.assert_allclose(
        result.previous, full[..., np.arange(1, t), np.arange(t - 1)].mean(-1), atol=1e-5
    )


def test_the_sliding_window_and_soft_cap_are_those_of_the_family(folders):
    """Mistral's window of 8: no captured row reaches 8 or more tokens back; Gemma2 caps its scores."""
    result = inspect(str(folders["mistral"]), TEXT, layers="0", heads="0", rows="-1", probe=False)
    row = result.captured[0]["weights"][0]
    assert np.count_nonzero(row) == 8 and row[-8:].sum() == pytest.approx(1.0, abs=1e-5)


def test_small_chunks_give_the_same_numbers(folders):
    import transformers

    model = transformers.AutoModelForCausalLM.from_pretrained(folders["llama"]).eval()
    ids = torch.tensor([list(range(3, 60))])
    stats = []
    for chunk in (1 << 23, 4 * 57 * 3):  # one chunk, or 3 query rows at a time
        with (
            capturing(model, Plan(layers=[1], heads=[0, 2], rows=[0, 30, 56], chunk_floats=chunk)) as rec,
            torch.no_grad(),
        ):
            model.base_model(input_ids=ids, use_cache=False)
        stats.append(rec.stats[1])
    for name in ("received", "entropy", "distance", "sink", "previous"):
        np.testing.assert_allclose(getattr(stats[0], name), getattr(stats[1], name), atol=1e-6)
    np.testing.assert_allclose(stats[0].rows[2], stats[1].rows[2], atol=1e-7)


def test_the_model_still_runs_its_own_attention_and_gets_it_back(folders):
    import transformers

    model = transformers.AutoModelForCausalLM.from_pretrained(
        folders["llama"], attn_implementation="sdpa"
    ).eval()
    ids = torch.tensor([list(range(3, 40))])
    with torch.no_grad():
        plain = model(input_ids=ids).logits
        with capturing(model, Plan()):
            captured = model(input_ids=ids).logits
    torch.testing.assert_close(plain, captured)
    assert model.config._attn_implementation == "sdpa"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [("-3:", [7, 8, 9]), ("0,5,2:4", [0, 2, 3, 5]), ("::4", [0, 4, 8]), ("-1", [9]), (None, [1])],
)
def test_indices_read_as_python_slices(spec, expected):
    assert parse_indices(spec, 10, "rows", [1]) == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("12", "rows 12 is out of range: rows must be in 0..9"),
        ("1:x", "expected indices and slices"),
        ("5:2", "selects nothing"),
        ("::0", "step cannot be 0"),
    ],
)
def test_bad_indices_name_the_valid_range(spec, message):
    with pytest.raises(UsageError, match=message):
        parse_indices(spec, 10, "rows", [])


def test_a_text_longer_than_the_positions_names_both_numbers(folders):
    with pytest.raises(UsageError, match=r"the text is \d+ tokens .* reads at most 256 positions"):
        inspect(str(folders["gpt2"]), TEXT * 20, probe=False)


def test_rows_only_equals_the_rows_of_the_full_capture(folders):
    import transformers

    model = transformers.AutoModelForCausalLM.from_pretrained(folders["mistral"]).eval()
    ids = torch.tensor([list(range(3, 60))])
    found = []
    for aggregates in (True, False):
        plan = Plan(layers=[1], heads=[1, 3], rows=[2, 40, 56], aggregates=aggregates)
        with capturing(model, plan) as rec, torch.no_grad():
            model.base_model(input_ids=ids, use_cache=False)
        found.append(rec.stats[1].rows)
        assert (rec.stats[0] is None) == (not aggregates)  # layer 0 is not read without aggregates
    for h in (1, 3):
        np.testing.assert_allclose(found[0][h], found[1][h], atol=1e-6)


@pytest.mark.parametrize("family", ["llama", "mistral", "gemma2"])
def test_rollout_rows_equal_the_product_of_the_eager_layers(folders, family):
    from attnkit.explain.attention_maps import residual_mix, rollout

    result = inspect(str(folders[family]), TEXT, rows="0,7,-1", maps=["rollout", "grad"], probe=False)
    full = _eager(folders[family], result.ids)
    expected = rollout([residual_mix(layer) for layer in full])  # (T, T): M_{L-1} ... M_0
    rows = result.maps["rollout"]["rows"]
    np.testing.assert_allclose(result.maps["rollout"]["weights"], expected[rows], atol=1e-5)
    grad = result.maps["grad"]["weights"]
    assert grad.shape == (3, len(result.ids)) and np.allclose(grad.sum(1), 1.0, atol=1e-5)
    assert np.abs(grad[1, 8:]).max() == 0.0  # row 7 reads nothing after token 7


def test_grad_is_refused_past_its_length_with_the_numbers(folders):
    with pytest.raises(UsageError, match=r"at most 1024 tokens and 64 rows, got \d+ tokens"):
        inspect(str(folders["llama"]), TEXT * 24, maps=["grad"], probe=False)
    with pytest.raises(UsageError, match="unknown map 'flow'; for causal language models: rollout, grad"):
        inspect(str(folders["llama"]), TEXT, maps=["flow"], probe=False)
