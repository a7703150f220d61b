"""Noisy-channel reranking: exact forward scores, the combined score's choice, the JSON, bad options."""

import json

import numpy as np
import pytest
import torch

from attnkit.api import load_translator
from attnkit.cli.main import main
from attnkit.data.batching import make_batch
from attnkit.rerank import NoisyChannel

SOURCES = ["the cat sat .", "a dog runs on the mat ."]


@pytest.fixture(scope="module")
def pair(translator_ckpt, transformer_ckpt):
    return load_translator(str(translator_ckpt)), load_translator(str(transformer_ckpt))


def test_forced_scores_equal_the_full_forward_pass(pair):
    _, transformer = pair
    targets = ["le chat .", "un chien sur le tapis ."]
    src_ids, tgt_ids = transformer.pair_ids(SOURCES, targets)
    batch = make_batch(src_ids, tgt_ids)
    with torch.no_grad():
        log_probs = torch.log_softmax(transformer.model(batch.src, batch.src_mask, batch.tgt_in).logits, -1)
    index = transformer.model.output.targets(batch.tgt_out).clamp_min(0)
    expected = (log_probs.gather(2, index.unsqueeze(-1)).squeeze(-1) * batch.tgt_mask).sum(1).numpy()
    np.testing.assert_allclose(transformer.log_probs(SOURCES, targets), expected, atol=1e-4)


def test_forward_scores_are_the_beams_exactly():
    """The shipped enfr-rnn (its outputs end with a real </s>, not one forced at the length limit, which
    the search counts as log-probability 0) with fren-rnn as the channel."""
    forward, channel = load_translator("enfr-rnn"), load_translator("fren-rnn")
    results = forward.translate(["The cat sat on the mat.", "I love you."], beam=5, n_best=5)
    for result in NoisyChannel(channel, 0.0, 0.0).rerank(results):
        cands = result.rerank["candidates"]
        texts = [c["text"] for c in cands]
        own = forward.log_probs([result.source] * len(texts), texts)
        np.testing.assert_allclose([c["forward"] for c in cands], own, atol=2e-3)
        back = channel.log_probs(texts, [result.source] * len(texts))
        np.testing.assert_allclose([c["channel"] for c in cands], back, atol=1e-4)
        assert [c["combined"] for c in cands] == sorted((c["combined"] for c in cands), reverse=True)
        assert result.translation == cands[0]["text"] == max(cands, key=lambda c: c["forward"])["text"]


def test_the_weights_decide_the_choice(pair):
    forward, channel = pair
    results = forward.translate(SOURCES, beam=4, n_best=4)
    loud = NoisyChannel(channel, 100.0, 0.0).rerank(results)
    for result in loud:
        cands = result.rerank["candidates"]
        assert result.translation == max(cands, key=lambda c: c["channel"])["text"]
        assert result.attention.shape == (len(result.target_tokens), len(result.source_tokens))


def test_a_reranking_translator_cuts_to_n_best_and_prints_both_scores(
    translator_ckpt, transformer_ckpt, capsys
):
    argv = ["translate", "--model", str(translator_ckpt), "--channel-model", str(transformer_ckpt), "--json"]
    assert main([*argv, "--n-best", "2", "--beam", "4", SOURCES[0]]) == 0
    row = json.loads(capsys.readouterr().out)
    assert len(row["alternatives"]) == 1 and len(row["rerank"]["candidates"]) >= 2
    assert row["rerank"]["candidates"][0]["text"] == row["translation"]
    assert set(row["rerank"]["candidates"][0]) == {
        "text",
        "beam_rank",
        "forward",
        "channel",
        "length",
        "combined",
    }


@pytest.mark.parametrize(
    "extra,message",
    [
        (["--rerank"], "has no shipped channel model"),
        (["--channel-weight", "2"], "--channel-weight and --length-weight go with --channel-model"),
        (["--rerank", "--beam", "1"], "needs --beam >= 2"),
    ],
)
def test_bad_rerank_options_are_one_line_errors(translator_ckpt, capsys, extra, message):
    assert main(["translate", "--model", str(translator_ckpt), *extra, "a cat"]) == 2
    assert message in capsys.readouterr().err
