"""int8 inference copies: same interface, close outputs, original untouched, attention still exact."""

import pytest
import torch

from attnkit.data.batching import make_batch
from attnkit.models.quantize import quantize_int8
from tests.helpers import random_sequences, tiny_rnn, tiny_transformer

MODELS = {
    "rnn-general": lambda: tiny_rnn("general", False),
    "rnn-concat-lstm": lambda: tiny_rnn("concat", True, "lstm"),
    "transformer": tiny_transformer,
}


@pytest.mark.parametrize("name", MODELS)
def test_int8_copy_scores_close_to_float_and_keeps_masks(name):
    model = MODELS[name]().eval()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    quantized = quantize_int8(model)
    b = make_batch(random_sequences(4, seed=5), random_sequences(4, seed=6))
    with torch.no_grad():
        ref, out = model(b.src, b.src_mask, b.tgt_in), quantized(b.src, b.src_mask, b.tgt_in)
    p, q = ref.logits.softmax(-1), out.logits.softmax(-1)
    assert (p - q).abs().max() < 0.02  # int8 weights, float activations: small probability change
    if out.attention is not None:
        padded = ~b.src_mask.unsqueeze(1).expand_as(out.attention)
        assert (out.attention.masked_select(padded) == 0).all()
        torch.testing.assert_close(out.attention.sum(-1), torch.ones_like(out.attention.sum(-1)))
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())  # a copy


def test_int8_layers_replace_float_ones_except_raw_weight_readers():
    from torch.ao.nn.quantized import dynamic

    quantized = quantize_int8(tiny_rnn("concat", True))
    assert isinstance(quantized.decoder_rnn, dynamic.GRU) and isinstance(quantized.encoder.rnn, dynamic.GRU)
    assert isinstance(quantized.combine, dynamic.Linear)
    scorer = quantized.attention.scorer
    assert isinstance(scorer.query_proj, torch.nn.Linear)  # ConcatScorer reads .weight: stays float
    assert scorer.concat_weight.shape[1] == 16 + 32


def test_int8_translator_and_classifier_load(translator_ckpt, classifier_ckpt):
    import attnkit

    translator = attnkit.load(translator_ckpt, int8=True)
    result = translator.translate(["The cat sits on the mat."], beam=3)[0]
    assert result.attention.shape == (len(result.target_tokens), len(result.source_tokens))
    exact = attnkit.load(translator_ckpt).translate(["The cat sits on the mat."], beam=3)[0]
    assert abs(result.attention.sum(1) - 1).max() < 1e-4 and exact.source_tokens == result.source_tokens
    classifier = attnkit.load(classifier_ckpt, int8=True)
    fp32 = attnkit.load(classifier_ckpt).classify(["love it, great fit"])[0].probabilities
    int8 = classifier.classify(["love it, great fit"])[0].probabilities
    assert int8.keys() == fp32.keys() and max(abs(int8[c] - fp32[c]) for c in fp32) < 0.05
    assert exact.score == pytest.approx(result.score, abs=0.5)
