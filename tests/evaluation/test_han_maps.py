"""A HAN's attention-derived maps (norm, grad, value zeroing) against explicit re-computations."""

import numpy as np
import pytest
import torch

from attnkit.errors import UsageError
from attnkit.explain.attribution import ProbabilityModel, map_scores, scores

DOCS = np.array([[[3, 4, 5], [6, 7, 0]], [[8, 3, 0], [0, 0, 0]]], dtype=np.int64)  # (B=2, N=2, W=3)


@pytest.fixture(scope="module")
def han(classifier_ckpt):
    from attnkit.api import load_classifier

    model = load_classifier(str(classifier_ckpt), backend="torch").model.eval()
    torch.manual_seed(1)
    with torch.no_grad():  # an untrained HAN's attention is near uniform: make it decisive
        for p in model.parameters():
            p.mul_(6.0)
    return model


def _parts(han):
    ids = torch.from_numpy(DOCS)
    with torch.no_grad():
        return han.forward_embedded(han.embedding(ids), ids != 0, parts=True)


def test_value_zeroing_equals_the_document_read_without_that_word(han):
    prob = ProbabilityModel(han)
    word, _ = map_scores(prob, DOCS, np.array([0, 0]), "value_zeroing")
    out = _parts(han)
    states, alpha = out.parts.word_states, out.word_weights  # (B, N, W, D), (B, N, W)
    b, i, j = 0, 1, 1
    keep = alpha.clone()
    keep[b, i, j] = 0
    sentences = torch.einsum("bnw,bnwd->bnd", keep, states)  # rebuilt from the word states
    with torch.no_grad():
        changed = han.read_sentences(sentences, torch.from_numpy(DOCS != 0).any(-1)).parts.document
    expected = 1 - torch.nn.functional.cosine_similarity(out.parts.document[b], changed[b], dim=0)
    assert word[b, i, j] == pytest.approx(float(expected), rel=1e-4, abs=1e-7)
    assert (word[DOCS == 0] == 0).all()


def test_grad_is_the_weight_times_the_finite_difference_derivative(han):
    prob = ProbabilityModel(han)
    target = np.array([2, 2])
    word, sentence = map_scores(prob, DOCS, target, "grad")
    out = _parts(han)
    mask = torch.from_numpy(DOCS != 0).any(-1)
    b, i, j, eps = 0, 0, 2, 1e-3
    with torch.no_grad():
        moved = out.parts.sentences.clone()
        moved[b, i] += eps * out.parts.word_states[b, i, j]  # alpha_ij + eps
        up = han.read_sentences(moved, mask).logits.softmax(-1)[b, 2]
        moved[b, i] -= 2 * eps * out.parts.word_states[b, i, j]
        down = han.read_sentences(moved, mask).logits.softmax(-1)[b, 2]
    derivative = float(up - down) / (2 * eps)
    expected = max(float(out.word_weights[b, i, j]) * derivative, 0.0)
    assert word[b, i, j] == pytest.approx(expected, rel=1e-2, abs=1e-6)
    assert (word >= 0).all() and (sentence >= 0).all()


def test_norm_is_the_moved_vectors_length_at_both_levels(han):
    prob = ProbabilityModel(han)
    word, sentence = map_scores(prob, DOCS, np.array([0, 0]), "norm")
    out = _parts(han)
    b, i, j = 0, 1, 0
    moved_word = out.word_weights[b, i, j] * out.parts.word_states[b, i, j]
    moved_sentence = out.sentence_weights[b, i] * out.parts.sentence_states[b, i]
    assert sentence[b, i] == pytest.approx(float(moved_sentence.norm()), rel=1e-5)
    assert word[b, i, j] == pytest.approx(float(moved_word.norm() * moved_sentence.norm()), rel=1e-5)


def test_rollout_and_flow_do_not_apply_to_a_han(han):
    prob = ProbabilityModel(han)
    for method in ("rollout", "flow"):
        with pytest.raises(UsageError, match=f"{method} does not apply to a HAN"):
            scores(prob, DOCS, np.array([0, 0]), method, "word")
