"""The Python API: attnkit.load returns a translator or classifier; translation is batch-invariant."""

import warnings

import numpy as np
import pytest
import torch

import attnkit

SENTENCES = ["ab cd", "hij", "", "a b c d e f g", "The cat sits on the mat.", "   ", "cd"]


def test_load_picks_the_kind_from_the_checkpoint(translator_ckpt, classifier_ckpt):
    from attnkit.classifier import Classifier
    from attnkit.translator import Translator

    assert isinstance(attnkit.load(translator_ckpt), Translator)
    assert isinstance(attnkit.load(classifier_ckpt), Classifier)
    with pytest.raises(FileNotFoundError, match="not a shipped model"):
        attnkit.load("no/such/model.pt")


@pytest.mark.parametrize("beam", [1, 3])
def test_translations_do_not_depend_on_batch_size(translator_ckpt, beam):
    translator = attnkit.load(translator_ckpt)
    one_by_one = [translator.translate([s], beam=beam)[0] for s in SENTENCES]
    for batch_size in (2, 3, 64):
        batched = translator.translate(SENTENCES, beam=beam, batch_size=batch_size)
        assert [r.translation for r in batched] == [r.translation for r in one_by_one]
        for a, b in zip(batched, one_by_one):
            np.testing.assert_allclose(a.attention, b.attention, atol=1e-5)


def test_empty_lines_give_empty_translations_and_tokens_match_attention(translator_ckpt):
    results = attnkit.load(translator_ckpt).translate(SENTENCES, beam=2)
    assert results[2].translation == "" and results[5].translation == ""
    for r in results:
        assert r.attention.shape == (len(r.target_tokens), len(r.source_tokens))


def test_over_long_input_is_truncated_with_a_warning(translator_ckpt):
    translator = attnkit.load(translator_ckpt)
    translator.max_source_tokens = 20
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = translator.translate(["ab " * 200], beam=1)[0]
    assert any("truncated" in str(w.message) for w in caught)
    assert len(result.source_tokens) == 21


def test_n_best_alternatives(translator_ckpt):
    result = attnkit.load(translator_ckpt).translate(["ab cd"], beam=3, n_best=3)[0]
    assert len(result.alternatives) == 2 and result.translation not in result.alternatives
    scores = [result.score, *result.alternative_scores]
    assert scores == sorted(scores, reverse=True)  # best first, by the beam's normalized score
    for tokens, attention in zip(result.alternative_tokens, result.alternative_attention):
        assert attention.shape == (len(tokens), len(result.source_tokens))
        assert abs(attention.sum(-1) - 1.0).max() < 1e-4


def test_forced_attention_for_alignment(translator_ckpt, transformer_ckpt):
    for path in (translator_ckpt, transformer_ckpt):
        src_pieces, tgt_pieces, att = attnkit.load(path).forced_attention(["ab cd"], ["ab cd"])[0]
        assert att.shape == (len(tgt_pieces), len(src_pieces))
        np.testing.assert_allclose(att.sum(1), 1.0, atol=1e-5)
    with pytest.raises(ValueError, match="Transformer models only"):
        attnkit.load(translator_ckpt).forced_attention(["a"], ["a"], layer=0)
    with pytest.raises(ValueError, match="out of range"):
        attnkit.load(transformer_ckpt).forced_attention(["a"], ["a"], layer=5)


def test_shipped_classifier_is_an_ensemble_whose_attention_covers_real_words_only():
    from attnkit.models.han import HANEnsemble

    classifier = attnkit.load("reviews-han", backend="torch")
    assert isinstance(classifier.model, HANEnsemble) and len(classifier.model.members) == 4
    texts = ["Love this dress!!! Fits perfectly.", "Runs small. The zipper broke after a wash. Returned it."]
    batched = classifier.classify(texts)
    for text, result in zip(texts, batched):
        alone = classifier.classify([text])[0]
        assert alone.label == result.label
        assert sum(result.probabilities.values()) == pytest.approx(1.0, abs=1e-5)
        assert sum(result.sentence_weights) == pytest.approx(1.0, abs=1e-5)
        for words, weights in zip(result.sentences, result.word_weights):
            assert len(weights) == len(words) and sum(weights) == pytest.approx(1.0, abs=1e-5)
    assert batched[0].label in ("4", "5") and batched[1].label in ("1", "2", "3")
    # it decides with half the sqrt-inverse class weights divided out (its kept prior correction, 0.5)
    weights = torch.tensor([2.3422, 1.7013, 1.2696, 0.9593, 0.6014])
    torch.testing.assert_close(classifier.prior_bias, 0.5 * weights.log(), atol=1e-4, rtol=0)


def test_classify_lists_every_word_of_a_long_review_and_says_which_were_not_read():
    from attnkit.visualization.explorer import static_page

    classifier = attnkit.load("reviews-han", backend="torch")
    run_on = " ".join(f"word{i}" for i in range(70))  # one 70-word sentence: the model reads 60
    text = "Great dress. " + run_on + ". " + " ".join(f"Short {i}." for i in range(35))
    result = classifier.classify([text])[0]
    assert result.sentences[1] == [f"word{i}" for i in range(70)] + ["."]
    assert len(result.sentences) == 2 + 35 and len(result.sentence_weights) == 37
    assert result.word_weights[1][60:] == [0.0] * 11 and sum(result.word_weights[1][:60]) == pytest.approx(
        1.0
    )
    assert result.sentence_weights[30:] == [0.0] * 7 and sum(result.sentence_weights) == pytest.approx(1.0)
    assert (
        result.unread_words == 11 + 7 * 3
    )  # 11 words of sentence 2, and sentences 31-37 ("Short", "i", ".")
    page = static_page({"view": "classify", "results": [result.to_json()]})
    assert "word69" in page and '"unread_words":32' in page
