"""Decoder-only language models: attnkit continues a prompt as generate() does and returns, for every
generated token, the attention its step paid to everything before it, equal to generate()'s own."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from attnkit.api import load_translator
from attnkit.cli.main import main
from tests.hf import tiny


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    return tiny.gpt2(tmp_path_factory.mktemp("gpt2"))


@pytest.fixture(scope="module")
def lm(gpt2_dir):
    return load_translator(str(gpt2_dir))


def test_continuations_and_step_attention_equal_generate(lm):
    tok, model = lm.tokenizer, lm.model
    for prompt in ["the cat", "where is", "i like"]:
        result = lm.translate([prompt])[0]
        ids = tok(prompt, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            out = model.generate(
                input_ids=ids,
                attention_mask=torch.ones_like(ids),
                do_sample=False,
                max_new_tokens=lm.max_new_tokens,
                pad_token_id=tok.pad_token_id,
                output_attentions=True,
                return_dict_in_generate=True,
            )
        generated = out.sequences[0, ids.shape[1] :].tolist()
        assert result.target_ids == generated[: len(result.target_ids)] and result.translation
        n = ids.shape[1]
        assert result.attention.shape == (len(result.target_ids), n + len(result.target_ids))
        for t, step in enumerate(out.attentions[: len(result.target_ids)]):
            own = step[-1][0, :, -1].mean(0).numpy()  # last layer, head mean, the step's query row
            np.testing.assert_allclose(result.attention[t, : own.shape[0]], own, atol=1e-5)
            assert np.allclose(result.attention[t, own.shape[0] :], 0.0)  # nothing after the step
        layers = lm.layer_attention(result)
        assert layers.shape == (2, 4, *result.attention.shape)


def test_cli_continues_a_prompt_with_attention(gpt2_dir, capsys):
    assert main(["translate", "--model", str(gpt2_dir), "--json", "--beam", "2", "the dog"]) == 0
    row = json.loads(capsys.readouterr().out.splitlines()[0])
    assert row["translation"] and len(row["attention"]) == len(row["target_tokens"])
    assert row["source_tokens"][-len(row["target_tokens"]) :] == row["target_tokens"]


@pytest.mark.parametrize(
    "argv",
    [
        ["align", "--model", "{lm}", "--reverse-model", "none"],
        ["align", "--model", "enfr-rnn", "--reverse-model", "{lm}"],
    ],
)
def test_a_causal_lm_given_to_align_is_one_line_naming_what_it_is(gpt2_dir, tmp_path, capsys, argv):
    (tmp_path / "s.en").write_text("the cat sits\n")
    (tmp_path / "s.fr").write_text("le chat\n")
    argv = [a.format(lm=gpt2_dir) for a in argv] + [
        "--src",
        str(tmp_path / "s.en"),
        "--tgt",
        str(tmp_path / "s.fr"),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "a Hugging Face causal language model" in err[0]


def test_a_causal_lm_as_channel_model_is_one_line(gpt2_dir, capsys):
    assert main(["translate", "--model", "enfr-rnn", "--channel-model", str(gpt2_dir), "I love you."]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert (
        len(err) == 1 and "cannot be the channel model: it is a Hugging Face causal language model" in err[0]
    )
