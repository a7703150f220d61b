"""sentencepiece round trip with fixed special ids; subword-to-word aggregation."""

import numpy as np

from attnkit.data.tokenizer import BOS, EOS, PAD, UNK, SubwordTokenizer
from attnkit.data.words import aggregate_to_words, group_words, word_groups

SENTENCES = ["the cat sits on the mat", "le chat est assis sur le tapis", "a dog runs", "un chien court"] * 50


def test_train_encode_decode_round_trip(tmp_path):
    tok = SubwordTokenizer.train(SENTENCES, vocab_size=40)
    assert (tok.sp.unk_id(), tok.sp.pad_id(), tok.sp.bos_id(), tok.sp.eos_id()) == (UNK, PAD, BOS, EOS)
    ids = tok.encode("the cat sits")
    assert tok.decode(ids + [EOS, PAD]) == "the cat sits"
    tok.save(tmp_path / "spm.model")
    assert SubwordTokenizer.load(tmp_path / "spm.model").encode("le chat") == tok.encode("le chat")


def test_word_groups_and_aggregation():
    src = ["\u2581The", "\u2581cat", "\u2581sit", "s", ".", "</s>"]
    tgt = ["\u2581Le", "\u2581ch", "at", "</s>"]
    assert word_groups(src) == [[0], [1], [2, 3, 4], [5]]
    assert group_words(tgt) == ["Le", "chat", "</s>"]
    att = np.full((4, 6), 1 / 6)
    words = aggregate_to_words(att, src, tgt)
    assert words.shape == (3, 4)
    np.testing.assert_allclose(words.sum(1), 1.0)
    np.testing.assert_allclose(words[1], [1 / 6, 1 / 6, 3 / 6, 1 / 6])


def test_subword_sampling_is_seeded_varied_and_decodes_back():
    tok = SubwordTokenizer.train(SENTENCES, vocab_size=40)
    texts = ["the cat sits on the mat", "le chat est assis sur le tapis"] * 20
    first, again = tok.sample_batch(texts, 0.1, seed=3), tok.sample_batch(texts, 0.1, seed=3)
    other = tok.sample_batch(texts, 0.1, seed=4)
    assert first == again  # a function of the seed: resumed runs and DDP ranks agree
    assert first != other
    assert len({tuple(ids) for ids in first[::2]}) > 1  # one sentence, several segmentations
    assert [tok.decode(ids) for ids in first] == texts  # every sample spells the same text
