"""Faithfulness measures checked against hand-computed cases on a model whose decision is one word."""

import math

import numpy as np
import pytest
import torch
from torch import Tensor, nn

from attnkit.evaluation.faithfulness import bootstrap_interval, han_faithfulness, kendall_tau
from attnkit.explain.attribution import ProbabilityModel, scores
from attnkit.explain.erasure import erase, erase_batch, pad_documents, top_units
from attnkit.models.han import HANOutput

KEY = 7  # the one word the toy model's decision rests on
GAIN = 8.0


class OneWordModel(nn.Module):
    """p(class 1) = sigmoid(GAIN x [KEY in the document]); attention on KEY (``faithful``) or on each
    sentence's first word (not). The HAN interface: embedding, forward, forward_embedded."""

    def __init__(self, faithful: bool) -> None:
        super().__init__()
        self.embedding = nn.Embedding(10, 1, padding_idx=0)
        with torch.no_grad():
            self.embedding.weight.zero_()
            self.embedding.weight[KEY] = 1.0
        self.faithful = faithful

    def forward(self, words: Tensor, word_mask: Tensor) -> HANOutput:
        return self.forward_embedded(self.embedding(words), word_mask)

    def forward_embedded(self, embedded: Tensor, word_mask: Tensor) -> HANOutput:
        x = embedded[..., 0] * word_mask  # (B, N, W)
        logit = GAIN * x.sum((1, 2))
        logits = torch.stack([torch.zeros_like(logit), logit], -1)
        if self.faithful:
            word = torch.where(word_mask, x + 1e-3, torch.zeros_like(x))
        else:
            word = torch.zeros_like(x)
            word[..., 0] = word_mask[..., 0].float()
        word = word / word.sum(-1, keepdim=True).clamp_min(1e-9)
        sentence = torch.where(word_mask.any(-1), 1.0 + (x.sum(-1) if self.faithful else 0), 0.0)
        return HANOutput(logits, word, sentence / sentence.sum(-1, keepdim=True))


# Two sentences, four words; KEY is the third word (second sentence, position 1).
DOC = np.array([[3, 4], [5, KEY]], dtype=np.int64)
P_KEY, P_NONE = 1 / (1 + math.exp(-GAIN)), 0.5


def test_erase_closes_gaps_and_drops_empty_sentences():
    assert erase(DOC, [(1, 1)], "word") == [[3, 4], [5]]
    assert erase(DOC, [(0, 0), (0, 1)], "word") == [[5, KEY]]
    assert erase(DOC, [(1, 1)], "word", keep=True) == [[KEY]]
    assert erase(DOC, [(0,)], "sentence") == [[5, KEY]]
    assert pad_documents([[], [[1, 2, 3]]]).shape == (2, 1, 3)
    assert erase_batch([DOC], [[]], "word", keep=True).tolist() == [[[0]]]


def test_top_units_takes_the_ceiling_of_k_and_breaks_ties_in_reading_order():
    ranked = np.array([[0.1, 0.1], [0.5, 0.1]])
    assert top_units(DOC, ranked, 0.0, "word") == []
    assert top_units(DOC, ranked, 0.05, "word") == [(1, 0)]  # ceil(0.2) = 1 word
    assert top_units(DOC, ranked, 0.5, "word") == [(1, 0), (0, 0)]
    assert top_units(DOC, np.array([1.0, 2.0]), 0.5, "sentence") == [(1,)]


@pytest.mark.parametrize("method", ["attention", "gradient_x_input", "integrated_gradients", "leave_one_out"])
def test_every_ranking_of_a_faithful_model_puts_the_key_word_first(method):
    prob = ProbabilityModel(OneWordModel(faithful=True))
    word, _ = scores(prob, DOC[None], np.array([1]), method, "word")
    assert np.unravel_index(np.argmax(word[0]), DOC.shape) == (1, 1)
    sentence, _ = scores(prob, DOC[None], np.array([1]), method, "sentence")
    assert int(np.argmax(sentence[0])) == 1


def test_leave_one_out_is_the_probability_drop():
    prob = ProbabilityModel(OneWordModel(faithful=True))
    word, _ = scores(prob, DOC[None], np.array([1]), "leave_one_out", "word")
    np.testing.assert_allclose(word[0], [[0, 0], [0, P_KEY - P_NONE]], atol=1e-6)


def _aopc(report, units, method, measure):
    return report[units][method][measure]["aopc"]["mean"]


def test_aopc_equals_the_hand_computed_value():
    fractions = [0.0, 0.25, 0.5]
    report = han_faithfulness(
        ProbabilityModel(OneWordModel(faithful=True)), [DOC], ["attention"], fractions, samples=50
    )
    # k = 0.25 and 0.5 erase KEY first (1 and 2 words of 4): the drop is P_KEY - 0.5 at both.
    assert _aopc(report, "word", "attention", "comprehensiveness") == pytest.approx(
        2 * (P_KEY - P_NONE) / 3, abs=1e-4
    )
    # keeping KEY alone keeps the decision; keeping nothing (k = 0) falls to 0.5.
    assert _aopc(report, "word", "attention", "sufficiency") == pytest.approx((P_KEY - P_NONE) / 3, abs=1e-4)
    curve = report["word"]["attention"]["comprehensiveness"]["curve"]
    assert curve[0]["mean"] == 0.0 and curve[0]["ci95"] == [0.0, 0.0]


def test_unfaithful_attention_scores_below_leave_one_out():
    report = han_faithfulness(
        ProbabilityModel(OneWordModel(faithful=False)),
        [DOC],
        ["attention", "leave_one_out"],
        [0.0, 0.25],
        samples=50,
    )
    # attention ranks the first words: erasing one of four (word 3) changes nothing.
    assert _aopc(report, "word", "attention", "comprehensiveness") == pytest.approx(0.0, abs=1e-6)
    assert _aopc(report, "word", "leave_one_out", "comprehensiveness") == pytest.approx(
        (P_KEY - P_NONE) / 2, abs=1e-4
    )
    assert report["agreement"]["leave_one_out"]["mean"] < 0.5


def test_random_rankings_average_over_seeds():
    report = han_faithfulness(
        ProbabilityModel(OneWordModel(faithful=True)), [DOC], ["random"], [0.0, 0.25], seeds=4, samples=20
    )
    value = _aopc(report, "word", "random", "comprehensiveness")
    hits = value / ((P_KEY - P_NONE) / 2)  # the share of seeds whose first word was KEY
    assert hits == pytest.approx(round(hits * 4) / 4, abs=1e-4)


def test_kendall_tau_and_bootstrap_by_hand():
    assert kendall_tau(np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 1.0])) == -1.0
    assert kendall_tau(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 5.0])) == 1.0
    assert bootstrap_interval(np.full(10, 0.25)) == (0.25, 0.25)
    low, high = bootstrap_interval(np.array([0.0, 1.0] * 50))
    assert low < 0.5 < high and high - low < 0.3


def test_unknown_method_and_bad_fractions_are_value_errors():
    prob = ProbabilityModel(OneWordModel(faithful=True))
    with pytest.raises(ValueError, match="valid: attention"):
        han_faithfulness(prob, [DOC], ["magic"])
    with pytest.raises(ValueError, match="0..1"):
        han_faithfulness(prob, [DOC], ["attention"], [0.0, 1.5])
