"""The lexical tables mixed into alignment (alignment.lexical): EM learns which words translate which,
posteriors are distributions, files round-trip without pickle, and each model gets its languages' tables."""

import numpy as np
import pytest

from attnkit.alignment import lexical
from attnkit.errors import UsageError

EN = ["the cat", "the dog", "a cat sleeps", "the dog sleeps", "a dog"]
FR = ["le chat", "le chien", "un chat dort", "le chien dort", "un chien"]


def table(iterations: int = 10) -> lexical.Table:
    return lexical.train([s.split() for s in EN], [t.split() for t in FR], iterations, keep=0.0)


def test_em_learns_which_word_translates_which():
    learned = table()
    for en, fr in [("cat", "chat"), ("dog", "chien"), ("sleeps", "dort"), ("the", "le"), ("a", "un")]:
        row = learned.lookup([en], list(learned.target))[:, 1]  # t(each French word | en)
        assert list(learned.target)[int(np.argmax(row))] == fr
    # each source word's probabilities over the target words sum to 1 (nothing pruned here)
    sums = np.bincount(learned.keys // len(learned.target), learned.probs.astype(np.float64))
    np.testing.assert_allclose(sums, 1.0, atol=1e-4)


def test_posteriors_are_distributions_with_the_null_word_dropped():
    learned = table()
    post = learned.posterior(["the", "cat", "sleeps"], ["le", "chat", "dort"])
    assert post.shape == (3, 3) and (post >= 0).all() and (post.sum(1) <= 1 + 1e-9).all()
    assert list(post.argmax(1)) == [0, 1, 2]
    unknown = learned.posterior(["zebra"], ["zèbre", "chat"])  # unknown words: the diagonal prior decides
    assert unknown.shape == (2, 1) and np.isfinite(unknown).all()
    assert learned.posterior([], ["chat"]).shape == (1, 0) and learned.posterior(["cat"], []).shape == (0, 1)
    prior = lexical.diagonal(4, 3, lexical.TENSION)
    np.testing.assert_allclose(prior.sum(1), 1.0)
    np.testing.assert_allclose(prior[:, 0], lexical.NULL)


def test_tables_round_trip_without_pickle(tmp_path):
    forward, backward = table(), lexical.train([t.split() for t in FR], [s.split() for s in EN], keep=0.0)
    path = tmp_path / "lexical.npz"
    lexical.save(path, forward, backward)
    again, back = lexical.load(path)
    assert again.source == forward.source and back.target == backward.target
    np.testing.assert_array_equal(again.keys, forward.keys)
    np.testing.assert_allclose(again.probs, forward.probs, atol=1e-3)  # stored as float16
    pickled = tmp_path / "bad.npz"
    np.savez(pickled, forward_source=np.array([{"code": 1}], dtype=object))
    with pytest.raises(UsageError, match="not a lexical table"):
        lexical.load(pickled)


def test_each_model_gets_its_languages_tables_or_one_clear_line():
    assert lexical.prior_for(("en", "fr"), 0.0, "m") is None
    en_fr, fr_en = lexical.prior_for(("en", "fr"), 0.5, "m"), lexical.prior_for(("fr", "en"), 0.5, "m")
    assert "cat" in en_fr.forward.source and "chat" in en_fr.forward.target
    assert fr_en.forward is en_fr.backward and fr_en.backward is en_fr.forward
    cat = en_fr.forward.posterior(["the", "cat"], ["le", "chat"])
    assert cat.argmax(1).tolist() == [0, 1]
    with pytest.raises(UsageError, match=r"no lexical tables for m \(en-ja\).*en-de, en-fr"):
        lexical.prior_for(("en", "ja"), 0.5, "m")
    with pytest.raises(UsageError, match=r"\[0, 1\]"):
        lexical.prior_for(("en", "fr"), 1.5, "m")


def test_the_hmm_is_a_distribution_and_batching_does_not_change_it():
    from attnkit.alignment import hmm

    jumps = np.array([1.0] * 7 + [2.0, 5.0, 3.0] + [1.0] * 5)
    matrix, start = hmm.transitions(4, jumps)
    np.testing.assert_allclose(matrix.sum(1), 1.0)
    np.testing.assert_allclose(start.sum(), 1.0)
    assert np.allclose(matrix[:4, 4:].diagonal(), hmm.NULL)  # a null state after each position
    learned = table()
    pairs = [
        (["the", "cat"], ["le", "chat"]),
        (["a", "dog"], ["un", "chien", "dort"]),
        (["the", "dog"], ["le"]),
    ]
    together = learned.posteriors(pairs)
    for (source, target), post in zip(pairs, together):
        alone = learned.posterior(source, target)
        assert post.shape == (len(target), len(source)) and (post.sum(1) <= 1 + 1e-9).all()
        np.testing.assert_allclose(post, alone, atol=1e-12)  # padded in a batch = alone
    assert together[0].argmax(1).tolist() == [0, 1] and together[1].argmax(1).tolist()[:2] == [0, 1]
    assert learned.jumps is not None and learned.jumps.argmax() == hmm.JUMP + 1  # forward by one


def test_a_source_past_the_hmms_bound_gets_ibm_model_1s_posterior():
    from attnkit.alignment import hmm

    learned = table()
    source, target = ["the", "cat"] * (hmm.MAX_SOURCE // 2 + 1), ["le", "chat"] * 3
    joint = learned.lookup(source, target) * lexical.diagonal(len(source), len(target), lexical.TENSION)
    expected = (joint / joint.sum(1, keepdims=True))[:, 1:]
    np.testing.assert_allclose(learned.posterior(source, target), expected)
    np.testing.assert_allclose(learned.posteriors([(source, target)])[0], expected)
