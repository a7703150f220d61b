"""Every registered model honours its task's contract (DESIGN.md), built through the registry by name."""

import pytest
import torch

from attnkit.config import ExperimentConfig
from attnkit.data.batching import make_batch
from attnkit.models import MODELS, build_model
from tests.helpers import VOCAB, random_sequences


def _tiny(name):
    config = ExperimentConfig(name=f"tiny-{name}", task=MODELS.task(name))
    config.model.name = name
    sizes = {
        "rnn": {"embed_size": 16, "hidden_size": 16},
        "transformer": {
            "d_model": 16,
            "num_heads": 2,
            "ff_size": 32,
            "encoder_layers": 2,
            "decoder_layers": 2,
        },
        "han": {"embed_size": 8, "word_hidden": 4, "sentence_hidden": 4},
    }
    for key, value in sizes.get(config.model.section, {}).items():
        setattr(config.model.options, key, value)
    torch.manual_seed(0)
    return build_model(config.model, VOCAB, num_classes=3).eval()


@pytest.mark.parametrize("name", MODELS.names("translation"))
def test_translation_models_follow_the_step_protocol(name):
    model = _tiny(name)
    batch = make_batch(random_sequences(3, seed=1), random_sequences(3, seed=2))
    state = model.encode(batch.src, batch.src_mask)
    log_probs, state, attention = model.step(batch.tgt_in[:, :1], state)
    assert log_probs.shape == (3, VOCAB) and attention.shape == (3, 1, batch.src.shape[1])
    torch.testing.assert_close(log_probs.exp().sum(-1), torch.ones(3))
    torch.testing.assert_close(attention.sum(-1), torch.ones(3, 1))
    assert (attention[~batch.src_mask.unsqueeze(1)] == 0).all()  # padding gets no weight
    assert model.attention_layers >= 0 and model.attention_heads >= 1


@pytest.mark.parametrize("name", MODELS.names("classification"))
def test_classifiers_return_logits_and_both_attention_levels(name):
    model = _tiny(name)
    words = torch.tensor([[[4, 5, 0], [6, 0, 0]], [[7, 8, 9], [0, 0, 0]]])
    mask = words != 0
    out = model(words, mask)
    assert out.logits.shape == (2, 3)
    torch.testing.assert_close(out.word_weights.sum(-1), mask.any(-1).float())
    torch.testing.assert_close(out.sentence_weights.sum(-1), torch.ones(2))
    assert (out.word_weights[~mask] == 0).all() and out.sentence_weights[1, 1] == 0


def test_registry_lists_every_model_with_its_task():
    assert MODELS.tasks() == {
        "captioner": "captioning",
        "han": "classification",
        "hard_captioner": "captioning",
        "rnn": "translation",
        "transformer": "translation",
    }
    with pytest.raises(
        ValueError, match="unknown model 'gpt'; valid names: captioner, han, hard_captioner, rnn, transformer"
    ):
        MODELS.get("gpt")
