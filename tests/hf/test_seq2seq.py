"""attnkit's backend over Hugging Face encoder-decoder models equals the model's own numbers: greedy
search equals ``generate()`` token for token, and every attention map equals ``output_attentions``."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from attnkit.api import load_translator
from attnkit.cli.main import main
from attnkit.data.words import group_words, word_starts
from attnkit.hf import is_hf_reference
from tests.hf.tiny import SOURCES, TARGETS

NEW = ["the cat sleeps", "where is the cat", "i like the dog", "the dog is red"]


@pytest.fixture(scope="module", params=["marian", "bart", "t5"])
def translator(request, family_dirs):
    """One tiny model per family: sentencepiece (Marian, T5) and byte-level BPE (BART) vocabularies,
    learned and sinusoidal positions, relative position biases (T5)."""
    return load_translator(str(family_dirs(request.param)))


def _generate(translator, sentences, **settings):
    tok = translator.hf_tokenizer
    batch = tok(sentences, return_tensors="pt", padding=True)
    with torch.no_grad():
        out = translator.model.generate(**batch, do_sample=False, max_new_tokens=40, **settings)
    return tok.batch_decode(out, skip_special_tokens=True)


def test_the_tiny_model_learned_real_words(translator):
    assert [r.translation for r in translator.translate(SOURCES[:4], beam=1)] == TARGETS[:4]


def test_greedy_equals_generate_token_for_token(translator):
    sentences = SOURCES + NEW
    ours = translator.translate(sentences, beam=1)
    assert [r.translation for r in ours] == _generate(translator, sentences, num_beams=1)
    tok = translator.hf_tokenizer
    for r, s in zip(ours, sentences):
        expected = translator.model.generate(
            **tok([s], return_tensors="pt"), do_sample=False, max_new_tokens=40
        )
        assert r.target_ids == expected[0, 1:-1].tolist()  # without the start token and </s>


def _hf_cross(translator, source, target_ids):
    """The model's own teacher-forced cross-attentions, (L, H, T, S)."""
    tok, model = translator.hf_tokenizer, translator.model
    src = tok([source], return_tensors="pt")
    decoder_in = torch.tensor([[model.config.decoder_start_token_id, *target_ids]])
    with torch.no_grad():
        out = model(**src, decoder_input_ids=decoder_in, output_attentions=True)
    return torch.stack([a[0] for a in out.cross_attentions]).numpy()


def test_attention_equals_the_models_output_attentions(translator):
    for r in translator.translate(SOURCES[:3] + NEW[:2], beam=1):
        own = _hf_cross(translator, r.source, r.target_ids)  # (L, H, T, S)
        assert r.attention.shape == own.shape[2:]
        np.testing.assert_allclose(r.attention, own[-1].mean(0), atol=1e-5)  # from the cached search steps
        np.testing.assert_allclose(translator.layer_attention(r), own, atol=1e-5)
        assert np.allclose(r.attention.sum(1), 1.0, atol=1e-5)


def test_forced_attention_and_head_choice(translator):
    pairs = translator.forced_attention(SOURCES[:3], TARGETS[:3], layer=0, heads=[1, 2])
    for (src, tgt, matrix), source, target in zip(pairs, SOURCES[:3], TARGETS[:3]):
        own = _hf_cross(translator, source, translator.target_tokenizer.encode(target))
        np.testing.assert_allclose(matrix, own[0, [1, 2]].mean(0), atol=1e-5)
        assert src[-1] == tgt[-1] == "</s>" and matrix.shape == (len(tgt), len(src))


def test_cli_translates_with_a_model_folder(marian_dir, capsys):
    assert (
        main(
            ["translate", "--model", str(marian_dir), "--json", "--beam", "3", "--n-best", "2", *SOURCES[:2]]
        )
        == 0
    )
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["translation"] for r in rows] == TARGETS[:2]
    assert rows[0]["source_tokens"][-1] == "</s>" and len(rows[0]["alternatives"]) == 1
    assert len(rows[0]["attention"]) == len(rows[0]["target_tokens"])


def test_folders_with_remote_code_and_unreachable_hub_ids_are_one_line(marian_dir, tmp_path, capsys):
    config = json.loads((marian_dir / "config.json").read_text())
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / "config.json").write_text(json.dumps({**config, "auto_map": {"AutoModel": "evil.Model"}}))
    assert main(["translate", "--model", str(evil), "hi"]) == 2
    assert "never runs code from a model folder" in capsys.readouterr().err
    assert is_hf_reference("Helsinki-NLP/opus-mt-en-de") and not is_hf_reference("enfr-rnn")
    assert main(["translate", "--model", "Helsinki-NLP/opus-mt-en-de", "hi"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--local-dir DIR) and pass --model DIR" in err[0]
    assert main(["translate", "--model", str(marian_dir), "--backend", "onnx", "hi"]) == 2


@pytest.mark.parametrize(
    ("pieces", "starts"),
    [
        (["\u2581le", "\u2581ch", "at", "</s>"], [True, True, False, True]),  # sentencepiece
        (["[CLS]", "the", "cat", "##s", "[SEP]"], [True, True, True, False, True]),  # WordPiece
        (["<s>", "The", "\u0120c", "ats", "</s>"], [True, True, True, False, True]),  # byte-level BPE
    ],
)
def test_word_starts_for_every_tokenizer_family(pieces, starts):
    assert word_starts(pieces) == starts
    assert len(group_words(pieces)) == sum(starts)


def test_words_of_each_family_are_spelled_back():
    assert group_words(["[CLS]", "lo", "##ve", "it", "[SEP]"]) == ["[CLS]", "love", "it", "[SEP]"]
    assert group_words(["<s>", "I", "\u0120lo", "ve", "</s>"]) == ["<s>", "I", "love", "</s>"]
    assert group_words(["\u2581ch", "at", "\u2581noir", "</s>"]) == ["chat", "noir", "</s>"]


def test_align_reads_words_of_any_family(translator):
    """Word links from a Hugging Face model: one row per target word, one column per source word, for
    sentencepiece and byte-level BPE (BART's <s> prefix dropped like </s>)."""
    from attnkit.alignment.links import word_matrices

    for matrix, source, target in zip(word_matrices(translator, SOURCES[:3], TARGETS[:3]), SOURCES, TARGETS):
        assert matrix.shape == (len(target.split()), len(source.split()))


def _limit(translator, sentence):
    """The tokens attnkit lets a sentence generate, EOS included (``search.max_lengths`` + 1)."""
    source = len(translator.tokenizer.encode(sentence)) + 1
    return int(np.float32(source) * np.float32(1.5)) + 10 + 1


@pytest.mark.parametrize("k", [2, 4])
def test_beam_search_equals_generate_hypotheses_and_scores(translator, k):
    """attnkit's search with generate()'s rules: the same n-best lists and length-normalized scores,
    with generate() given the same length limit (degenerate hypotheses run into it)."""
    sentences = SOURCES + NEW + ["red", "the the cat mat dog tea"]
    ours = translator.translate(sentences, beam=k, n_best=k)
    tok = translator.hf_tokenizer
    for sentence, r in zip(sentences, ours):
        with torch.no_grad():
            out = translator.model.generate(
                **tok([sentence], return_tensors="pt"),
                num_beams=k,
                num_return_sequences=k,
                do_sample=False,
                max_new_tokens=_limit(translator, sentence),
                forced_eos_token_id=translator.eos_id,
                output_scores=True,
                return_dict_in_generate=True,
            )
        assert [r.translation, *r.alternatives] == tok.batch_decode(out.sequences, skip_special_tokens=True)
        np.testing.assert_allclose([r.score, *r.alternative_scores], out.sequences_scores.numpy(), atol=1e-4)
        assert r.attention.shape == (len(r.target_tokens), len(r.source_tokens))


def test_the_explorer_serves_a_hugging_face_model(marian_dir):
    """/api/translate on a Hugging Face folder: layer attention per layer and head, as the library gives."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    from attnkit.serve.app import create_app
    from attnkit.serve.models import ModelSet

    models = ModelSet([str(marian_dir)], [])
    client = TestClient(create_app(models), base_url="http://127.0.0.1:8000")
    info = client.get("/api/models").json()["translators"][0]
    assert info["backend"] == "hugging face" and (info["layers"], info["heads"]) == (2, 4)
    body = {"sentences": [SOURCES[0]], "beam": 3, "layers": True}
    row = client.post("/api/translate", json=body).json()["results"][0]
    assert row["translation"] == TARGETS[0]
    expected = models.translators[next(iter(models.translators))].model.translate([SOURCES[0]], beam=3)[0]
    layers = np.array(row["layer_attention"])
    assert layers.shape == (2, 4, len(row["target_tokens"]), len(row["source_tokens"]))
    np.testing.assert_allclose(layers[-1].mean(0), expected.attention, atol=1e-4)


def test_align_searches_layers_and_heads_on_a_trial_set(marian_dir, tmp_path, capsys):
    """Choose the layer and heads on a trial set (--search), then align with them, on a HF model."""
    (tmp_path / "s.txt").write_text("the dog eats\nthe cat eats\n")
    (tmp_path / "t.txt").write_text("le chien mange\nle chat mange\n")
    (tmp_path / "g.naacl").write_text("1 1 1 S\n1 2 2 S\n1 3 3 S\n2 1 1 S\n2 2 2 S\n2 3 3 S\n")
    files = [
        "--src",
        str(tmp_path / "s.txt"),
        "--tgt",
        str(tmp_path / "t.txt"),
        "--gold",
        str(tmp_path / "g.naacl"),
    ]
    assert main(["align", "--model", str(marian_dir), *files, "--search"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    rows = [json.loads(line) for line in lines[:-1]]
    assert len(rows) == 2 * (4 + 1) and lines[-1].startswith("best: layer")
    best = min(rows, key=lambda r: r["aer"])
    heads = [] if best["heads"] == "all" else ["--heads", ",".join(map(str, best["heads"]))]
    assert (
        main(["align", "--model", str(marian_dir), *files, "--layer", str(best["layer"]), *heads, "--json"])
        == 0
    )
    assert json.loads(capsys.readouterr().out)["aer"] == best["aer"]
