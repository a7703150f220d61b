"""HAN: attention sums to 1 over real words/sentences, is 0 on padding; batch independence; learning."""

import pytest
import torch
import torch.nn.functional as F

from attnkit.data.documents import Vocabulary, document_from_text, make_document_batch
from attnkit.models.han import HAN

TEXTS = ["love it. great fit! buy it", "terrible fabric. ripped", "ok", "runs small. returned it. sad"]


def _setup():
    docs = [document_from_text(t, label=i % 2) for i, t in enumerate(TEXTS)]
    vocab = Vocabulary.build(docs, min_freq=1)
    torch.manual_seed(0)
    return (
        docs,
        vocab,
        HAN(len(vocab), num_classes=2, embed_size=8, word_hidden=4, sentence_hidden=4, dropout=0.0).eval(),
    )


def test_weights_sum_to_one_over_real_tokens_and_zero_on_padding():
    docs, vocab, model = _setup()
    batch = make_document_batch(docs, vocab)
    out = model(batch.words, batch.word_mask)
    sentence_mask = batch.word_mask.any(-1)
    torch.testing.assert_close(out.sentence_weights.sum(-1), torch.ones(len(docs)))
    assert (out.sentence_weights[~sentence_mask] == 0).all()
    sums = out.word_weights.sum(-1)
    torch.testing.assert_close(sums[sentence_mask], torch.ones(int(sentence_mask.sum())))
    assert (out.word_weights[~batch.word_mask] == 0).all()


def test_document_alone_equals_inside_padded_batch():
    docs, vocab, model = _setup()
    batch = make_document_batch(docs, vocab)
    together = model(batch.words, batch.word_mask)
    for i, doc in enumerate(docs):
        alone_batch = make_document_batch([doc], vocab)
        alone = model(alone_batch.words, alone_batch.word_mask)
        torch.testing.assert_close(alone.logits[0], together.logits[i], atol=1e-5, rtol=1e-5)
        n, w = alone_batch.words.shape[1:]
        torch.testing.assert_close(
            alone.word_weights[0], together.word_weights[i, :n, :w], atol=1e-6, rtol=1e-5
        )


def test_overfits_tiny_set():
    docs, vocab, model = _setup()
    model.train()
    batch = make_document_batch(docs, vocab)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    for _ in range(60):
        loss = F.cross_entropy(model(batch.words, batch.word_mask).logits, batch.labels)
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    assert (model(batch.words, batch.word_mask).logits.argmax(-1) == batch.labels).all()


def test_class_weights_are_powers_of_inverse_frequency():
    from attnkit.training.classification import class_weights

    labels = [0] * 6 + [1] * 3 + [2] * 1  # n = 10, C = 3: inverse = 10 / (3 * count)
    inverse = torch.tensor([10 / 18, 10 / 9, 10 / 3])
    torch.testing.assert_close(class_weights(labels, 3, "inverse"), inverse)
    torch.testing.assert_close(class_weights(labels, 3, "sqrt_inverse"), inverse.sqrt())
    torch.testing.assert_close(class_weights(labels, 3, "quarter_inverse"), inverse.sqrt().sqrt())
    assert class_weights(labels, 3, "none") is None


def test_word_mask_with_holes_is_refused():
    docs, vocab, model = _setup()
    batch = make_document_batch(docs, vocab)
    holes = batch.word_mask.clone()
    holes[0, 0, 0] = False  # a padding word before real words
    with pytest.raises(ValueError, match=r"word_mask \(B, N, W\) must mark each sentence's first words"):
        model(batch.words, holes)


def test_word_dropout_blanks_whole_words_in_training_only():
    docs, vocab, model = _setup()
    batch = make_document_batch(docs, vocab)
    plain = model(batch.words, batch.word_mask).logits
    model.word_dropout = 0.5
    torch.testing.assert_close(model(batch.words, batch.word_mask).logits, plain)  # eval: no effect
    model.train()
    torch.manual_seed(3)
    dropped = model(batch.words, batch.word_mask)
    torch.manual_seed(3)  # the same draw, done by hand: the blanked words' embeddings set to zero
    real = int(batch.word_mask.sum())
    keep = torch.rand(real, 1) >= 0.5
    assert 0 < int(keep.sum()) < real
    embedded = model.embedding(batch.words)
    embedded[batch.word_mask] = embedded[batch.word_mask] * keep
    model.word_dropout = 0.0
    by_hand = model.forward_embedded(embedded, batch.word_mask)
    torch.testing.assert_close(dropped.logits, by_hand.logits)
    torch.testing.assert_close(dropped.word_weights, by_hand.word_weights)
    with pytest.raises(ValueError, match=r"word_dropout must be in \[0, 1\)"):
        HAN(len(vocab), word_dropout=1.0)
