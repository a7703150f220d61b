"""The shipped models in combination: the default translator (int8 Transformer reranked by fren-rnn) with
layer views and every map, one record per shipped model read by every surface, channel and reverse models
checked. Each test failed before the combinations issue (40) was fixed."""

from __future__ import annotations

import json

import numpy as np
import pytest

import attnkit
from attnkit.api import load_translator
from attnkit.cli.main import main
from attnkit.errors import UsageError
from attnkit.pretrained import DEFAULTS, RECORDS
from attnkit.pretrained.records import check_records
from attnkit.results import explorer_rows

CAT = "The cat sits on the mat."


@pytest.fixture(scope="module")
def default():
    return attnkit.load()


def test_the_default_reranks_as_the_cli_does_and_keeps_the_chosen_candidates_ids(default):
    [r] = default.translate([CAT], beam=5)
    assert r.translation == "Le chat s'est assis sur le tapis."  # the channel's choice, not the beam's first
    assert r.rerank is not None and r.rerank["candidates"][0]["beam_rank"] != 0
    assert default.target_tokenizer.pieces(r.target_ids) + ["</s>"] == r.target_tokens
    layers = default.layer_attention(r)
    assert layers.shape[2:] == r.attention.shape == (len(r.target_tokens), len(r.source_tokens))
    [row] = explorer_rows(default, [r])
    assert all(len(head) == len(r.target_tokens) for layer in row["layer_attention"] for head in layer)


@pytest.mark.parametrize("method", ["grad", "rollout"])
def test_every_map_of_the_default_cli_has_a_row_per_target_token(capsys, method):
    assert main(["translate", "--json", "--attention-map", method, CAT]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["attention_map"] == method and len(out["attention"]) == len(out["target_tokens"]) == 11
    np.testing.assert_allclose(np.sum(out["attention"], axis=1), 1.0, atol=1e-3)


def test_every_shipped_translator_with_a_channel_reranks_by_default():
    for name, record in RECORDS.items():
        if record.task == "translation":
            translator = load_translator(name)
            assert (translator.reranker is not None) == (record.channel is not None), name
    assert load_translator("ende-transformer").reranker.channel_weight == 0.4


def test_records_mirror_their_partners_and_name_every_default():
    check_records()
    assert DEFAULTS["translation"] == "enfr-transformer" and DEFAULTS["alignment"] == "enfr-rnn"


def test_int8_keeps_the_default_channel_on_the_runtime():
    translator = load_translator(int8=True)
    assert translator.backend == "onnx" and translator.reranker.channel.backend == "onnx"


@pytest.mark.parametrize(
    "rerank,weight,message",
    [
        (
            "enfr-rnn",
            1.0,
            "enfr-rnn translates en->fr; enfr-rnn translates en->fr, so the channel model must",
        ),
        ("deen-rnn", 1.0, "deen-rnn translates de->en; enfr-rnn translates en->fr"),
        ("fren-rnn", float("nan"), "--channel-weight: expected a finite number, got nan"),
        ("fren-rnn", float("inf"), "--channel-weight: expected a finite number, got inf"),
    ],
)
def test_channel_models_of_the_wrong_direction_and_non_finite_weights_are_refused(rerank, weight, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_translator("enfr-rnn", rerank=rerank, channel_weight=weight)


def test_align_names_the_reverse_model_when_its_scores_do_not_apply(tmp_path, capsys):
    (tmp_path / "s.en").write_text(CAT + "\n")
    (tmp_path / "s.fr").write_text("Le chat est assis sur le tapis .\n")
    argv = ["align", "--model", "enfr-transformer", "--scores", "rollout"]
    assert main([*argv, "--src", str(tmp_path / "s.en"), "--tgt", str(tmp_path / "s.fr")]) == 2
    err = capsys.readouterr().err
    assert "rollout does not apply to fren-rnn (the reverse model), an attnkit RNN translator" in err


def test_the_channel_model_scores_the_source_as_the_translator_read_it(default):
    """A source cut at the translator's 200 subwords is scored by the channel as cut (a 1 MB line took 98 s
    when the channel scored it whole)."""
    seen = []
    original = default.reranker.channel.log_probs
    default.reranker.channel.log_probs = lambda texts, sources: (
        seen.append(sources) or original(texts, sources)
    )
    try:
        long_line = " ".join(["the cat sits on the mat and the dog runs in the house"] * 60)
        [r] = default.translate([long_line, CAT][:1], beam=2)
        default.translate([CAT], beam=2)
    finally:
        default.reranker.channel.log_probs = original
    assert r.rerank is not None and len(r.source_ids) == default.max_source_tokens
    assert (
        all(len(s) < len(long_line) / 2 for s in seen[0]) and seen[1][0] == CAT
    )  # a whole sentence as given
