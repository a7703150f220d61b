"""``attnkit export --format hf``: an attnkit Transformer as a Pegasus folder that transformers loads with
its own classes, giving the torch backend's translations and attention through attnkit's HF backend."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from attnkit.api import load_translator
from attnkit.cli.main import main
from attnkit.errors import ExportError
from attnkit.export.hf import export_hf
from attnkit.translator import Translator

SENTENCES = ["The cat sits on the mat.", "abc", "the the the cat", "mat sits on", "Where is the station?"]


@pytest.fixture(scope="module")
def exported(transformer_ckpt, tmp_path_factory):
    from tests.runtime.test_export import _peaked

    tmp = tmp_path_factory.mktemp("hf-export")
    path = _peaked(transformer_ckpt, tmp, "model")  # sharpened: searches make clear choices
    export_hf(str(path), tmp / "hf")
    return Translator.from_checkpoint(path), tmp / "hf"


def test_transformers_loads_the_folder_with_its_own_classes(exported):
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    torch_side, folder = exported
    config = json.loads((folder / "config.json").read_text())
    assert config["architectures"] == ["PegasusForConditionalGeneration"] and "auto_map" not in config
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSeq2SeqLM.from_pretrained(folder)
    for sentence in SENTENCES:
        assert tokenizer(sentence)["input_ids"] == [*torch_side.tokenizer.encode(sentence), 3]
    with torch.no_grad():
        out = model.generate(**tokenizer(SENTENCES[:2], return_tensors="pt", padding=True), num_beams=1)
    ours = torch_side.translate(SENTENCES[:2], beam=1)
    assert tokenizer.batch_decode(out, skip_special_tokens=True) == [r.translation for r in ours]


@pytest.mark.parametrize("beam", [1, 3])
def test_the_hf_backend_gives_the_torch_translations_and_attention(exported, beam):
    torch_side, folder = exported
    hf_side = load_translator(str(folder))
    for a, b in zip(
        torch_side.translate(SENTENCES, beam=beam, n_best=beam),
        hf_side.translate(SENTENCES, beam=beam, n_best=beam),
    ):
        assert (a.target_ids, a.alternatives) == (b.target_ids, b.alternatives)
        assert a.score == pytest.approx(b.score, abs=1e-4)
        np.testing.assert_allclose(a.attention, b.attention, atol=1e-5)
        np.testing.assert_allclose(torch_side.layer_attention(a), hf_side.layer_attention(b), atol=1e-5)


def test_self_attention_of_the_torch_transformer_equals_its_exports(exported):
    """attnkit's own Transformer returns its encoder and decoder self-attention; the Pegasus export,
    computed by transformers' own code, gives the same maps (the residual permutation leaves them alone)."""
    torch_side, folder = exported
    hf_side = load_translator(str(folder))
    for a, b in zip(torch_side.translate(SENTENCES, beam=1), hf_side.translate(SENTENCES, beam=1)):
        ours, theirs = torch_side.self_attention(a), hf_side.self_attention(b)
        assert ours["encoder"].shape == (2, 2, len(a.source_tokens), len(a.source_tokens))
        assert ours["decoder"].shape == (2, 2, len(a.target_tokens), len(a.target_tokens))
        for side in ("encoder", "decoder"):
            np.testing.assert_allclose(ours[side], theirs[side], atol=1e-5)
        np.testing.assert_allclose(ours["encoder"].sum(-1), 1.0, atol=1e-5)
        assert np.allclose(np.triu(ours["decoder"][0, 0], 1), 0.0)
    assert torch_side.returns_self_attention and hf_side.returns_self_attention


def test_rnns_and_files_are_refused_in_one_line(translator_ckpt, tmp_path, capsys):
    with pytest.raises(ExportError, match="an RNN has no Hugging Face architecture"):
        export_hf(str(translator_ckpt), tmp_path / "out")
    assert (
        main(["export", str(translator_ckpt), "--out", str(tmp_path / "o"), "--format", "hf", "--int8"]) == 2
    )
    assert "--format hf writes fp32 weights" in capsys.readouterr().err


def test_heads_on_the_hugging_face_export_names_what_it_is(exported, tmp_path, capsys):
    """Was: 'an RNN translator has no attention heads' for a Transformer exported to Hugging Face."""
    from attnkit.cli.main import main

    _, folder = exported
    (tmp_path / "s").write_text("ab\n")
    capsys.readouterr()
    assert main(["heads", str(folder), "--src", str(tmp_path / "s"), "--ref", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err
    assert (
        "is a Hugging Face encoder-decoder (run heads on the attnkit checkpoint" in err and "RNN" not in err
    )
