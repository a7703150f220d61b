"""Hugging Face encoder classifiers through attnkit: the model's own probabilities, words of its
WordPiece vocabulary, and word weights that are the [CLS] row of its own last-layer attention."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from attnkit.api import load, load_classifier
from attnkit.cli.main import main
from tests.hf import tiny


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory):
    return tiny.bert(tmp_path_factory.mktemp("bert"))


@pytest.fixture(scope="module")
def classifier(bert_dir):
    return load_classifier(str(bert_dir))


def test_labels_and_probabilities_are_the_models_own(classifier):
    texts = [t for t, _ in tiny.REVIEWS] + ["i love the colour", "the fabric ripped"]
    results = classifier.classify(texts)
    tok, model = classifier.tokenizer, classifier.model
    with torch.no_grad():
        probs = torch.softmax(model(**tok(texts, padding=True, return_tensors="pt")).logits, -1).numpy()
    for r, p in zip(results, probs):
        np.testing.assert_allclose([r.probabilities[c] for c in classifier.labels], p, atol=1e-5)
    assert [r.label for r in results[: len(tiny.REVIEWS)]] == [y for _, y in tiny.REVIEWS]


def test_word_weights_are_the_cls_rows_attention_over_words(classifier):
    text = "lovely dress, it fits perfectly"
    result = classifier.classify([text])[0]
    tok, model = classifier.tokenizer, classifier.model
    with torch.no_grad():
        out = model(**tok([text], return_tensors="pt"), output_attentions=True)
    row = out.attentions[-1][0].mean(0)[0].numpy()  # (T,): [CLS]'s attention, head mean
    pieces = tok.convert_ids_to_tokens(tok(text)["input_ids"])
    assert result.sentences == [["lovely", "dress", ",", "it", "fits", "perfectly"]]
    # "perfectly" may be several WordPiece pieces: its weight is their sum, renormalized without specials
    content = row[1:-1]
    assert len(pieces) - 2 >= len(result.sentences[0])
    np.testing.assert_allclose(sum(result.word_weights[0]), 1.0, atol=1e-5)
    assert result.word_weights[0][0] == pytest.approx(content[0] / content.sum(), abs=1e-5)
    pieces_read, maps = classifier.layer_attention(text)
    assert maps.shape == (2, 4, len(pieces_read), len(pieces_read)) and pieces_read == pieces
    own = torch.stack([a[0] for a in out.attentions]).numpy()
    assert maps.dtype == np.float16
    np.testing.assert_allclose(maps.astype(np.float32), own, atol=1e-3)
    _, exact = classifier.layer_attention(text, layers=[-1], heads=[1, 3], dtype=np.float32)
    np.testing.assert_allclose(exact, own[[-1]][:, [1, 3]], atol=1e-6)


def test_cli_classifies_with_a_model_folder(bert_dir, capsys):
    assert main(["classify", "--model", str(bert_dir), "--json", "i love this dress"]) == 0
    row = json.loads(capsys.readouterr().out.splitlines()[0])
    assert row["label"] == "positive" and set(row["probabilities"]) == {"negative", "positive"}
    assert type(load(str(bert_dir))).__name__ == "HFClassifier"


def test_faithfulness_and_evaluation_run_on_a_hugging_face_classifier(bert_dir, tmp_path, capsys):
    """The HAN's erasure curves, Captum attributions and rankings, over the model's pieces."""
    data = tmp_path / "reviews.jsonl"
    rows = [{"text": t, "label": y} for t, y in tiny.REVIEWS]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    argv = ["faithfulness", "--model", str(bert_dir), "--data", str(data), "--json", "--seeds", "1"]
    assert (
        main([*argv, "--methods", "attention,integrated_gradients,leave_one_out,random", "--steps", "8"]) == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["n_documents"] == len(rows) and report["accuracy"] == 1.0
    for method in ("attention", "integrated_gradients", "leave_one_out", "random"):
        aopc = report["word"][method]["comprehensiveness"]["aopc"]["mean"]
        assert -1.0 <= aopc <= 1.0
    loo = report["word"]["leave_one_out"]["comprehensiveness"]["aopc"]["mean"]
    assert loo > report["word"]["random"]["comprehensiveness"]["aopc"]["mean"]  # a real ranking beats chance
    assert main(["evaluate-classifier", "--model", str(bert_dir), "--data", str(data), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == 1.0


def test_rollout_flow_and_grad_of_a_hugging_face_classifier(classifier):
    from attnkit.errors import UsageError
    from attnkit.explain import attention_maps as am
    from attnkit.hf.faithfulness import HFProbability

    prob = HFProbability(classifier)
    words = torch.from_numpy(np.stack(prob.documents(["i love this dress so much"])))  # (1, 1, W)
    target = torch.tensor([1])
    rollout, _ = prob.map_scores(words, target, "rollout")
    ids, mask = prob._ids(words)
    with torch.no_grad():
        layers = classifier.model(input_ids=ids, attention_mask=mask, output_attentions=True).attentions
    product = am.rollout([am.residual_mix(a[0].numpy()) for a in layers])[0]  # [CLS]'s row
    start = len(prob.prefix)
    assert np.allclose(rollout[0, 0], product[start : start + words.shape[2]], atol=1e-6)
    flow, _ = prob.map_scores(words, target, "flow")
    assert (flow >= 0).all() and (flow <= 1 + 1e-6).all() and flow.shape == words.shape
    grad, _ = prob.map_scores(words, target, "grad")
    assert (grad >= 0).all() and grad.shape == words.shape
    with pytest.raises(UsageError, match="norm does not apply to a Hugging Face classifier"):
        prob.map_scores(words, target, "norm")
