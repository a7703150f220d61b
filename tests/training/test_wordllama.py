"""WordLlama token embeddings as the HAN's embedding init: what the vectors know, their size, bad input."""

import json

import pytest
import torch
import torch.nn.functional as F

from attnkit.config import ConfigError, load_config
from attnkit.models import build_model
from attnkit.training import wordllama
from attnkit.training.classification import ClassificationTask
from attnkit.training.wordllama import ROW_NORM, token_vectors, wordllama_vectors
from tests.helpers import han_overrides

pytest.importorskip("safetensors")
pytest.importorskip("tokenizers")
if not __import__("importlib").util.find_spec("wordllama"):
    pytest.skip("the wordllama package is not installed", allow_module_level=True)

WORDS = ["<pad>", "<unk>", "terrible", "awful", "gorgeous", "beautiful", "small", "tiny", "returned"]


def test_synonyms_are_nearer_than_antonyms_in_the_full_vectors():
    unit = F.normalize(token_vectors(WORDS[2:]), dim=1)  # (7, 256)
    sims = unit @ unit.T
    terrible, awful, gorgeous, beautiful = 0, 1, 2, 3
    assert sims[terrible, awful] > sims[terrible, gorgeous] + 0.1
    assert sims[gorgeous, beautiful] > sims[gorgeous, awful] + 0.1


def test_projected_vectors_have_the_asked_size_zero_specials_and_the_word2vec_scale():
    for dim in (4, 100, 256):  # 100 > the 7 words' rank: the extra columns are 0
        vectors = wordllama_vectors(WORDS, dim)
        assert vectors.shape == (len(WORDS), dim)
        assert torch.equal(vectors[:2], torch.zeros(2, dim))
        assert vectors[2:].norm(dim=1).mean().item() == pytest.approx(ROW_NORM * (dim / 100) ** 0.5, rel=1e-5)


def test_the_projection_is_onto_the_top_principal_components():
    full = token_vectors(WORDS[2:]).double()
    centred = full - full.mean(0)
    three = wordllama_vectors(WORDS, 3)[2:].double()  # (7, 3)
    gram = three.T @ three  # uncorrelated columns, variance falling
    off_diagonal = gram - torch.diag(gram.diag())
    assert float(off_diagonal.abs().max()) < 1e-4 * float(gram.max())
    assert gram[0, 0] >= gram[1, 1] >= gram[2, 2]
    singular = torch.linalg.svdvals(centred)[:3]  # column norms = top singular values times one scale
    norms = gram.diag().sqrt()
    assert (norms / singular).tolist() == pytest.approx([float(norms[0] / singular[0])] * 3, rel=1e-4)


def test_bad_size_and_missing_package_say_what_to_do(monkeypatch):
    with pytest.raises(ValueError, match="embed_size must be 1..256"):
        wordllama_vectors(WORDS, 300)
    monkeypatch.setattr(wordllama.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ValueError, match=r"pip install 'attnkit\[vectors\]'"):
        wordllama_vectors(WORDS, 8)


def test_config_names_the_valid_values_and_refuses_two_inits():
    message = "training.pretrained_vectors: unknown value 'glove'; valid: none, wordllama"
    with pytest.raises(ConfigError, match=message):
        load_config(None, ["training.pretrained_vectors=glove"])
    with pytest.raises(ConfigError, match="not both"):
        load_config(None, ["training.pretrained_vectors=wordllama", "training.word2vec_epochs=2"])


def test_han_task_puts_the_vectors_into_the_embedding(tmp_path):
    data = tmp_path / "reviews.jsonl"
    rows = [{"text": "Terrible, awful fit.", "label": 1}, {"text": "Gorgeous and beautiful.", "label": 5}]
    data.write_text("\n".join(json.dumps(rows[i % 2]) for i in range(10)) + "\n")
    config = load_config(
        None,
        [
            *han_overrides(data),
            "model.han.embed_size=4",
            "training.pretrained_vectors=wordllama",
            f"training.out_dir={tmp_path / 'run'}",
        ],
    )
    task = ClassificationTask(config)
    model = build_model(config.model, task.vocab_size, num_classes=task.num_classes)
    logged: list[str] = []
    task.pretrain(model, log=logged.append)
    assert torch.equal(model.embedding.weight.detach(), wordllama_vectors(task.vocab.words, 4))
    assert any("WordLlama" in line for line in logged)
