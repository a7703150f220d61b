"""Hugging Face folders that cannot work as asked get one line and exit 2 (never a random head, a
traceback or an empty answer), and generation settings are followed or named. Each failed before issue
40: a masked LM classified with a random head, a regression or multi-label head read as a softmax, a
RoBERTa text past its positions crashed, a folder without tokenizer files ended in a TypeError or an empty
translation, config.json as a list in a traceback, a start token only in generation_config.json in an
IndexError; min_new_tokens, num_beams, max_length and multi-token bad_words_ids went unsaid."""

from __future__ import annotations

import json
import shutil

import pytest

pytest.importorskip("transformers")

from attnkit.api import load_translator  # noqa: E402
from attnkit.cli.main import main  # noqa: E402
from tests.hf import tiny  # noqa: E402

SIZES = {"hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 32}


@pytest.fixture(scope="module")
def bert_parts(tmp_path_factory):
    """A tiny BERT classifier folder (trained a little) to copy and break."""
    return tiny.bert(tmp_path_factory.mktemp("bert"), steps=20)


def _one_line_exit_2(capsys, argv, needle):
    capsys.readouterr()  # what building the folder printed
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0], err


def _rewrite_config(folder, **changes):
    config = json.loads((folder / "config.json").read_text())
    config.update(changes)
    (folder / "config.json").write_text(json.dumps(config))


@pytest.mark.parametrize(
    "changes,needle",
    [
        ({"architectures": ["BertForMaskedLM"]}, "has no trained classification head"),
        ({"problem_type": "regression"}, "a regression head"),
        ({"problem_type": "multi_label_classification"}, "a multi-label head"),
    ],
)
def test_folders_without_a_softmax_classification_head_are_refused(
    bert_parts, tmp_path, capsys, changes, needle
):
    folder = tmp_path / "model"
    shutil.copytree(bert_parts, folder)
    if changes.get("problem_type") == "regression":  # one output, saved as transformers saves it
        from transformers import AutoModelForSequenceClassification

        model = AutoModelForSequenceClassification.from_pretrained(
            bert_parts, num_labels=1, problem_type="regression", ignore_mismatched_sizes=True
        )
        model.save_pretrained(folder)
    else:
        _rewrite_config(folder, **changes)
    _one_line_exit_2(capsys, ["classify", "--model", str(folder), "a lovely dress"], needle)


def test_weights_that_do_not_fit_the_config_are_one_line(bert_parts, tmp_path, capsys):
    folder = tmp_path / "model"
    shutil.copytree(bert_parts, folder)
    labels = {"0": "a", "1": "b", "2": "c"}
    _rewrite_config(folder, num_labels=3, id2label=labels, label2id={v: int(k) for k, v in labels.items()})
    _one_line_exit_2(capsys, ["classify", "--model", str(folder), "a lovely dress"], "weights do not fit")


def test_a_roberta_text_longer_than_its_positions_is_read_up_to_them(tmp_path):
    import torch
    from transformers import RobertaConfig, RobertaForSequenceClassification, RobertaTokenizerFast

    from attnkit.api import load_classifier

    vocab, merges = tiny._bpe_files([t for t, _ in tiny.REVIEWS], tmp_path)
    tokenizer = RobertaTokenizerFast(vocab, merges, model_max_length=512)
    config = RobertaConfig(vocab_size=len(tokenizer), max_position_embeddings=130, pad_token_id=1, **SIZES)
    torch.manual_seed(0)
    RobertaForSequenceClassification(config).save_pretrained(tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "model")
    classifier = load_classifier(str(tmp_path / "model"))
    assert classifier.max_tokens == 128  # 130 positions, counted from padding_idx + 1 = 2
    [r] = classifier.classify([" ".join(["lovely dress"] * 100)])
    assert r.unread_words > 0 and abs(sum(r.probabilities.values()) - 1) < 1e-5


def test_a_folder_without_tokenizer_files_is_one_line(marian_dir, tmp_path, capsys):
    folder = tmp_path / "model"
    folder.mkdir()
    for name in ("config.json", "generation_config.json", "model.safetensors"):
        shutil.copy(marian_dir / name, folder / name)
    _one_line_exit_2(capsys, ["translate", "--model", str(folder), "the cat"], "no tokenizer files")


@pytest.mark.parametrize(
    "text,needle", [("[1, 2]", "expected a JSON object, got a list"), ("{oops", "not a JSON")]
)
def test_a_config_that_is_not_a_json_object_is_one_line(marian_dir, tmp_path, capsys, text, needle):
    folder = tmp_path / "model"
    shutil.copytree(marian_dir, folder)
    (folder / "config.json").write_text(text)
    _one_line_exit_2(capsys, ["translate", "--model", str(folder), "the cat"], needle)


def test_a_start_token_only_in_the_generation_config_is_used(marian_dir, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(marian_dir, folder)
    config = json.loads((folder / "config.json").read_text())
    start = config.pop("decoder_start_token_id")  # Marian's class default (58100) is outside this vocabulary
    (folder / "config.json").write_text(json.dumps(config))
    generation = json.loads((folder / "generation_config.json").read_text())
    (folder / "generation_config.json").write_text(
        json.dumps({**generation, "decoder_start_token_id": start})
    )
    translator = load_translator(str(folder))
    assert translator.stepper.bos_id == start
    assert translator.translate(["the cat sits on the mat"], beam=2)[0].translation


def test_generation_settings_are_followed_or_named(marian_dir, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(marian_dir, folder)
    generation = json.loads((folder / "generation_config.json").read_text())
    settings = {"min_new_tokens": 12, "num_beams": 4, "max_new_tokens": 30, "bad_words_ids": [[5, 6]]}
    (folder / "generation_config.json").write_text(json.dumps({**generation, **settings}))
    with pytest.warns(UserWarning) as caught:
        translator = load_translator(str(folder))
    said = " ".join(str(w.message) for w in caught)
    assert all(f"{k}=" in said for k in ("num_beams", "max_new_tokens", "bad_words_ids"))
    for r in translator.translate(["the cat", "i like tea"], beam=2):
        assert len(r.target_tokens) - 1 >= 12  # min_new_tokens followed: no </s> before 12 tokens


def test_pickled_bin_weights_and_a_truncated_safetensors_file_are_one_line(marian_dir, tmp_path, capsys):
    pickled = tmp_path / "pickled"
    shutil.copytree(marian_dir, pickled)
    (pickled / "model.safetensors").rename(pickled / "pytorch_model.bin")
    _one_line_exit_2(capsys, ["translate", "--model", str(pickled), "the cat"], "pickled .bin files")
    cut = tmp_path / "cut"
    shutil.copytree(marian_dir, cut)
    data = (cut / "model.safetensors").read_bytes()
    (cut / "model.safetensors").write_bytes(data[: len(data) // 2])
    _one_line_exit_2(
        capsys, ["translate", "--model", str(cut), "the cat"], "safetensors weights cannot be read"
    )


def test_a_causal_lm_given_to_classify_names_what_it_is(tmp_path, capsys):
    folder = tiny.gpt2(tmp_path / "gpt2", steps=5)
    _one_line_exit_2(capsys, ["classify", "--model", str(folder), "a lovely dress"], "is a generation model")
