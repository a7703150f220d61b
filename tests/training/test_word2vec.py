"""Skip-gram word vectors (the HAN's optional embedding init): what they learn and what they leave."""

import json
import random

import pytest
import torch
import torch.nn.functional as F

from attnkit.config import ConfigError, load_config
from attnkit.models import build_model
from attnkit.training.classification import ClassificationTask
from attnkit.training.word2vec import train_word2vec
from tests.helpers import han_overrides

TOPIC_A, TOPIC_B = list(range(2, 7)), list(range(7, 12))


def _topic_sentences(n: int = 300, seed: int = 0) -> list[list[int]]:
    """Each sentence draws its 6 words from one topic only, plus the odd <unk> (1)."""
    rng = random.Random(seed)
    return [[rng.choice(TOPIC_A if i % 2 else TOPIC_B) for _ in range(6)] + [1] for i in range(n)]


def _mean_cosine(vectors: torch.Tensor, a: list[int], b: list[int]) -> float:
    """Mean cosine between the rows a and b, after removing the mean of the trained rows (2..)."""
    unit = F.normalize(vectors - vectors[2:].mean(0), dim=1)
    sims = unit[a] @ unit[b].T
    if a == b:
        return float((sims.sum() - sims.diag().sum()) / (len(a) * (len(a) - 1)))
    return float(sims.mean())


def test_words_sharing_contexts_get_closer_vectors_than_words_that_never_meet():
    vectors, stats = train_word2vec(_topic_sentences(), 12, 16, epochs=5, subsample=1.0, seed=3)
    assert vectors.shape == (12, 16) and stats.epochs == 5 and stats.pairs > 0
    within = (_mean_cosine(vectors, TOPIC_A, TOPIC_A) + _mean_cosine(vectors, TOPIC_B, TOPIC_B)) / 2
    across = _mean_cosine(vectors, TOPIC_A, TOPIC_B)
    assert within > 0.8 and across < -0.5


def test_pad_and_unk_rows_are_never_trained():
    dim = 16
    vectors, _ = train_word2vec(_topic_sentences(), 12, dim, epochs=3, subsample=1.0)
    assert vectors[:2].abs().max() <= 0.5 / dim  # still the initial uniform(-0.5/E, 0.5/E)
    assert vectors[2:].abs().max() > 0.5 / dim


def test_same_seed_same_vectors():
    first, _ = train_word2vec(_topic_sentences(), 12, 8, epochs=2, seed=5)
    second, _ = train_word2vec(_topic_sentences(), 12, 8, epochs=2, seed=5)
    assert torch.equal(first, second)


def test_bad_arguments_say_what_is_wrong():
    with pytest.raises(ValueError, match="epochs, window, negatives, dim >= 1"):
        train_word2vec(_topic_sentences(), 12, 8, epochs=0)
    with pytest.raises(ValueError, match="at least two known words"):
        train_word2vec([[0, 1, 1]], 12, 8)
    with pytest.raises(ConfigError, match="word2vec_epochs must be >= 0"):
        load_config(None, ["training.word2vec_epochs=-1"])


def test_han_task_puts_the_vectors_into_the_embedding(tmp_path):
    rows = [
        {"text": "Great soft dress. Love it.", "label": 5},
        {"text": "Awful fit. Returned it.", "label": 1},
    ]
    data = tmp_path / "reviews.jsonl"
    data.write_text("\n".join(json.dumps(rows[i % 2]) for i in range(40)) + "\n")
    config = load_config(
        None,
        [
            *han_overrides(data),
            "model.han.embed_size=8",
            "training.word2vec_epochs=2",
            f"training.out_dir={tmp_path / 'run'}",
        ],
    )
    task = ClassificationTask(config)
    model = build_model(config.model, task.vocab_size, num_classes=task.num_classes)
    before = model.embedding.weight.detach().clone()
    logged: list[str] = []
    task.pretrain(model, log=logged.append)
    after = model.embedding.weight.detach()
    assert torch.equal(after[0], torch.zeros(8))  # <pad> stays zero
    assert not torch.allclose(after[2:], before[2:])
    assert any(line.startswith("word2vec:") for line in logged)

    # the vectors are kept with the run, and a second run (an ensemble member) can reuse them
    saved = tmp_path / "run" / "word2vec.pt"
    reuse = load_config(
        None, [*han_overrides(data), "model.han.embed_size=8", f"training.word2vec_vectors={saved}"]
    )
    second = build_model(reuse.model, task.vocab_size, num_classes=task.num_classes)
    ClassificationTask(reuse).pretrain(second, log=logged.append)
    assert torch.equal(second.embedding.weight, after)


def test_reused_vectors_must_fit_the_vocabulary(tmp_path):
    data = tmp_path / "reviews.jsonl"
    data.write_text('{"text": "Great soft dress.", "label": 5}\n{"text": "Awful.", "label": 1}\n')
    wrong = tmp_path / "word2vec.pt"
    torch.save({"words": ["<pad>", "<unk>", "other"], "vectors": torch.zeros(3, 100)}, wrong)
    config = load_config(None, [*han_overrides(data), f"training.word2vec_vectors={wrong}"])
    task = ClassificationTask(config)
    model = build_model(config.model, task.vocab_size, num_classes=task.num_classes)
    with pytest.raises(ValueError, match="trained for another vocabulary"):
        task.pretrain(model, log=print)
    config.training.word2vec_vectors = str(tmp_path / "missing.pt")
    with pytest.raises(ValueError, match="missing.pt does not exist"):
        ClassificationTask(config).pretrain(model, log=print)
    with pytest.raises(ConfigError, match="not both"):
        load_config(None, ["training.word2vec_epochs=2", f"training.word2vec_vectors={wrong}"])
