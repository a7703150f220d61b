"""One contract, every translation backend (in the spirit of Hugging Face's ``ModelTesterMixin``): the
torch RNN and Transformer, their ONNX exports, and a Hugging Face Marian all honour what
``TranslatorBase`` promises, so a surface written against it (CLI, explorer, align) works on each."""

from __future__ import annotations

import numpy as np
import pytest

from attnkit.api import load_translator
from attnkit.data.words import group_words

SENTENCES = ["the cat sits on the mat", "the dog eats", "where is the dog", "i like tea"]
BACKENDS = ["torch-rnn", "torch-transformer", "onnx-rnn", "onnx-transformer", "hugging-face-marian"]


@pytest.fixture(scope="module", params=BACKENDS)
def translator(request, translator_ckpt, transformer_ckpt, tmp_path_factory):
    kind, _, model = request.param.partition("-")
    if kind == "hugging":
        pytest.importorskip("transformers")
        from tests.hf import tiny

        return load_translator(str(tiny.marian(tmp_path_factory.mktemp("contract-marian"))))
    checkpoint = translator_ckpt if model == "rnn" else transformer_ckpt
    if kind == "torch":
        return load_translator(str(checkpoint), backend="torch")
    from attnkit.export import export

    folder = tmp_path_factory.mktemp(f"contract-{model}") / "onnx"
    export(str(checkpoint), folder)
    return load_translator(str(folder), backend="onnx")


def test_translations_carry_tokens_and_a_distribution_per_row(translator):
    for r in translator.translate(SENTENCES, beam=3, n_best=2):
        assert r.attention.shape == (len(r.target_tokens), len(r.source_tokens))
        np.testing.assert_allclose(r.attention.sum(1), 1.0, atol=1e-4)
        assert r.source_tokens[-1] == r.target_tokens[-1] == translator.eos_piece
        assert len(r.alternatives) <= 1 and len(r.alternative_scores) == len(r.alternatives)
        assert len(group_words(r.source_tokens[:-1])) >= 1


def test_a_batch_equals_one_by_one_and_empty_lines_stay_empty(translator):
    together = translator.translate([*SENTENCES, "  "], beam=2)
    assert together[-1].translation == "" and together[-1].attention.size == 0
    for sentence, r in zip(SENTENCES, together):
        alone = translator.translate([sentence], beam=2)[0]
        assert alone.target_tokens == r.target_tokens
        np.testing.assert_allclose(alone.attention, r.attention, atol=1e-4)


def test_teacher_forcing_reproduces_the_search_attention(translator):
    """The backend's forced step over a result's own ids gives the attention the search recorded (the
    untrained tiny models' outputs need not re-encode to the same pieces, so ids, not texts)."""
    results = translator.translate(SENTENCES, beam=1)
    for r in results:
        forced = translator._forced_maps([r.source_ids], [r.target_ids], False)[0]
        np.testing.assert_allclose(
            forced[: r.attention.shape[0], : r.attention.shape[1]], r.attention, atol=1e-4
        )
    pairs = translator.forced_attention(SENTENCES, [r.translation or "a" for r in results])
    assert all(matrix.shape == (len(tgt), len(src)) for src, tgt, matrix in pairs)


def test_layer_attention_is_every_layer_and_head_and_its_default_is_the_decoding_attention(translator):
    r = translator.translate(SENTENCES[:1], beam=1)[0]
    maps = translator.layer_attention(r)
    if not translator.attention_layers:
        assert maps is None
        return
    assert maps.shape == (translator.attention_layers, translator.attention_heads, *r.attention.shape)
    np.testing.assert_allclose(maps[translator.default_layer].mean(0), r.attention, atol=1e-4)
