"""Show, Attend and Tell on a tiny untrained model: the search, the JSON contract, ONNX = torch, the
doubly stochastic penalty and attention correctness against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnkit.captioner import Captioner
from attnkit.data.images import fit_array
from attnkit.datasets.digits import digit_strings
from attnkit.evaluation.captioning import attention_correctness, cell_overlap, uniform_correctness
from attnkit.models.captioner import Captioner as CaptionerModel
from attnkit.models.captioner import doubly_stochastic_penalty


@pytest.fixture(scope="module")
def captioner(captioner_ckpt):
    return Captioner.from_checkpoint(captioner_ckpt)


@pytest.fixture(scope="module")
def images():
    return np.stack([fit_array(s.image, 1, 48, 192) for s in digit_strings("dev", 6)])


def test_beam_one_equals_greedy(captioner, images):
    from attnkit.decoding.captions import beam_captions, greedy_captions

    greedy = greedy_captions(captioner.model, images, max_len=8)
    beam = beam_captions(captioner.model, images, max_len=8, beam_size=1, alpha=0.0)
    for g, [b] in zip(greedy, beam):
        assert g.tokens == b.tokens
        assert g.score == pytest.approx(b.score, abs=1e-5)
        np.testing.assert_allclose(g.attention, b.attention, atol=1e-6)


def test_each_word_attention_is_a_distribution_over_the_grid_cells(captioner, images):
    for result in captioner.caption_arrays(images, beam_size=3, n_best=2):
        assert result.grid == (6, 24)  # 48 x 192 halved three times
        assert result.attention.shape == (len(result.tokens), 6, 24)
        np.testing.assert_allclose(result.attention.sum((1, 2)), 1.0, atol=1e-5)
        assert (result.attention >= 0).all()
        assert len(result.alternatives) == 1
        assert result.alternatives[0].score <= result.score


def test_json_contract_rows_tile_the_image(captioner, images):
    result = captioner.caption_arrays(images[:1], [(96, 384)])[0].to_json()
    assert result["image_size"] == [96, 384] and result["grid"] == [6, 24]
    assert len(result["attention"]) == len(result["tokens"])
    for word_map in result["attention"]:
        assert len(word_map) == 6 and all(len(row) == 24 for row in word_map)
        assert abs(sum(map(sum, word_map)) - 1.0) < 1e-3


def test_forced_attention_follows_the_given_words(captioner, images):
    words = [("one", "two", "three"), ("four",)]
    maps = captioner.forced_attention(images[:2], words)
    assert [m.shape for m in maps] == [(3, 6, 24), (1, 6, 24)]
    model = captioner.model
    batch = torch.from_numpy(images[:1])
    index = {w: i for i, w in enumerate(captioner.words)}
    inputs = torch.tensor([[2, index["one"], index["two"]]])
    with torch.no_grad():
        _, alphas, _ = model(batch, inputs)
    np.testing.assert_allclose(maps[0], alphas[0].numpy().reshape(3, 6, 24), atol=1e-6)


def test_doubly_stochastic_penalty_equals_the_hand_computed_value():
    alphas = torch.tensor([[[0.5, 0.5, 0.0], [0.2, 0.2, 0.6], [1.0, 0.0, 0.0]]])  # (1, T=3, L=3)
    mask = torch.tensor([[True, True, False]])  # the third step is padding
    # sums over the real steps: 0.7, 0.7, 0.6 -> (0.3^2 + 0.3^2 + 0.4^2)
    assert doubly_stochastic_penalty(alphas, mask).item() == pytest.approx(0.09 + 0.09 + 0.16)


def test_hard_attention_samples_one_cell_and_reports_its_log_probability():
    torch.manual_seed(0)
    model = CaptionerModel(
        14, conv_channels=(4, 8), stem_pool=1, embed_size=8, hidden_size=16, attention_size=8, hard=True
    )
    images = torch.rand(3, 1, 16, 32)
    inputs = torch.tensor([[2, 5, 6], [2, 7, 8], [2, 9, 3]])
    logits, alphas, chosen = model(images, inputs, sample=True)
    assert logits.shape == (3, 3, 14) and alphas.shape == (3, 3, 32)
    assert (chosen <= 0).all() and (chosen >= np.log(1e-12)).all()
    model.eval()
    with torch.no_grad():  # inference: the argmax cell, the same every time
        first = model(images, inputs)[0]
        assert torch.equal(first, model(images, inputs)[0])


def test_cell_overlap_and_correctness_by_hand():
    # a 2 x 4 grid over an 8 x 16 image: cells are 4 x 4 px; the box covers cell (0, 1) and half of (0, 2)
    overlap = cell_overlap((0, 4, 4, 10), (2, 4), (8, 16))
    np.testing.assert_allclose(overlap, [[0, 1, 0.5, 0], [0, 0, 0, 0]])
    attention = np.zeros((1, 2, 4))
    attention[0, 0, 1], attention[0, 0, 2], attention[0, 1, 3] = 0.5, 0.3, 0.2
    assert attention_correctness(attention, [(0, 4, 4, 10)], (8, 16))[0] == pytest.approx(0.5 + 0.15)
    assert uniform_correctness([(0, 4, 4, 10)], (8, 16))[0] == pytest.approx(24 / 128)
    uniform = np.full((1, 2, 4), 1 / 8)
    assert attention_correctness(uniform, [(0, 4, 4, 10)], (8, 16))[0] == pytest.approx(24 / 128)


def test_onnx_export_equals_torch(captioner_ckpt, captioner, images, tmp_path):
    from attnkit.export import export
    from attnkit.runtime import load_export

    export(captioner_ckpt, tmp_path / "onnx")
    onnx = load_export(tmp_path / "onnx")
    for a, b in zip(captioner.caption_arrays(images, beam_size=3), onnx.caption_arrays(images, beam_size=3)):
        assert a.tokens == b.tokens
        np.testing.assert_allclose(a.attention, b.attention, atol=1e-4)
        assert a.score == pytest.approx(b.score, abs=1e-4)
