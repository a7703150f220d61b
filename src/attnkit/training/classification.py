"""The classification task (HAN): documents, class weighting, dev accuracy and macro-F1."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..checkpoint import Checkpoint, atomic_torch_save
from ..config import ExperimentConfig
from ..data.documents import Document, DocumentBatch, Vocabulary, make_document_batch, read_documents
from ..datasets import document_split
from ..device import model_device, to_device
from ..errors import ConfigError
from ..evaluation.classification import classification_report
from ..log import log
from ..vocab import WORD_PAD
from .word2vec import train_word2vec
from .wordllama import wordllama_vectors

WEIGHT_POWERS = {"inverse": 1.0, "sqrt_inverse": 0.5, "quarter_inverse": 0.25}


def class_weights(labels: list[int], num_classes: int, kind: str) -> Tensor | None:
    """'inverse': n / (C * count); 'sqrt_inverse' / 'quarter_inverse': its 1/2 / 1/4 power; 'none': none."""
    if kind == "none":
        return None
    counts = Counter(labels)
    n = len(labels)
    weights = torch.tensor([n / (num_classes * max(counts[c], 1)) for c in range(num_classes)])
    return weights ** WEIGHT_POWERS[kind]


def _docs(config: ExperimentConfig, split: str, labels: list[str] | None) -> tuple[list[Document], list[str]]:
    paths = config.data.train if split == "train" else config.data.dev
    path = paths[0] if paths else document_split(config.data.dataset, split)
    return read_documents(
        path, config.data.text_field, config.data.label_field, config.data.title_field, labels
    )


def training_labels(config: ExperimentConfig, labels: list[str]) -> list[int] | None:
    """The class index of every training document, or None when the training data is not readable."""
    try:
        docs, _ = _docs(config, "train", labels)
    except (OSError, ValueError):
        return None
    return [d.label for d in docs[: config.data.train_limit or None]]


class ClassificationTask:
    @classmethod
    def for_run(
        cls, config: ExperimentConfig, checkpoint: Checkpoint | None, log: Any = None
    ) -> ClassificationTask:
        """The task for a training run (``training.run.make_task`` through ``tasks.TABLE``)."""
        return cls(config, checkpoint)

    def __init__(self, config: ExperimentConfig, checkpoint: Checkpoint | None = None) -> None:
        self.config = config
        labels = checkpoint.labels if checkpoint else None
        self.train_docs, self.labels = _docs(config, "train", labels)
        if config.data.train_limit:
            self.train_docs = self.train_docs[: config.data.train_limit]
        self.dev_docs, _ = _docs(config, "dev", self.labels)
        self.vocab = (
            Vocabulary(checkpoint.vocabulary or [])
            if checkpoint
            else Vocabulary.build(self.train_docs, config.data.min_freq)
        )
        self.weights = class_weights(
            [d.label for d in self.train_docs], self.num_classes, config.training.class_weighting
        )
        log.info(
            f"data: {len(self.train_docs)} training and {len(self.dev_docs)} dev documents, "
            f"{len(self.vocab)} words, classes {self.labels}"
        )

    @property
    def num_classes(self) -> int:
        return len(self.labels)

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def _plan(self, epoch: int) -> list[list[int]]:
        """Documents bucketed by sentence count, batches of ~max_tokens words, order from (seed, epoch)."""
        rng = random.Random(self.config.training.seed * 100_003 + epoch)
        order = list(range(len(self.train_docs)))
        rng.shuffle(order)
        order.sort(key=lambda i: len(self.train_docs[i].sentences))
        size = max(1, self.config.data.max_tokens // 64)
        batches = [order[s : s + size] for s in range(0, len(order), size)]
        rng.shuffle(batches)
        return batches

    def batches(self, epoch: int, start: int, rank: int, world_size: int) -> Iterator[DocumentBatch]:
        for ids in self._plan(epoch)[start:]:
            mine = ids[rank::world_size] or ids[:1]
            yield make_document_batch([self.train_docs[i] for i in mine], self.vocab)

    def loss(self, model: nn.Module, batch: DocumentBatch) -> tuple[Tensor, int, int]:
        logits = model(batch.words, batch.word_mask).logits
        weights = None if self.weights is None else self.weights.to(logits.device)
        smoothing = self.config.training.label_smoothing
        loss = F.cross_entropy(
            logits, batch.labels, weight=weights, reduction="sum", label_smoothing=smoothing
        )
        units = float(weights[batch.labels].sum()) if weights is not None else batch.labels.numel()
        return loss, units, int(batch.word_mask.sum())  # type: ignore[return-value]

    @torch.no_grad()
    def predict(self, model: nn.Module, docs: list[Document]) -> list[int]:
        preds: list[int] = []
        order = sorted(range(len(docs)), key=lambda i: len(docs[i].sentences))
        by_index: dict[int, int] = {}
        for s in range(0, len(order), 128):
            chunk = order[s : s + 128]
            batch = to_device(make_document_batch([docs[i] for i in chunk], self.vocab), model_device(model))
            for i, p in zip(chunk, model(batch.words, batch.word_mask).logits.argmax(-1).tolist()):
                by_index[i] = p
        preds = [by_index[i] for i in range(len(docs))]
        return preds

    def validate(self, model: nn.Module) -> dict[str, float]:
        report = classification_report(
            [d.label for d in self.dev_docs], self.predict(model, self.dev_docs), self.num_classes
        )
        model.train()
        return {
            "dev_accuracy": round(report["accuracy"], 4),
            "dev_macro_f1": round(report["macro_f1"], 4),
            "score": round(report["macro_f1"], 4),
        }

    def pretrain(self, model: nn.Module, log: Callable[[str], None]) -> None:
        """Before training from scratch: word2vec vectors into the HAN's embedding.

        ``training.word2vec_epochs`` > 0 trains them (the time counts in the run's wall time) and
        keeps them in ``out_dir/word2vec.pt``; ``training.word2vec_vectors`` reuses such a file;
        ``training.pretrained_vectors: wordllama`` takes WordLlama's (``training.wordllama``)."""
        t = self.config.training
        embedding: nn.Embedding = model.embedding  # type: ignore[assignment]
        if t.word2vec_vectors:
            vectors = self._load_vectors(Path(t.word2vec_vectors))
            log(f"word2vec: vectors from {t.word2vec_vectors}")
        elif t.word2vec_epochs > 0:
            vectors = self._train_vectors(embedding.embedding_dim, log)
        elif t.pretrained_vectors == "wordllama":
            vectors = wordllama_vectors(self.vocab.words, embedding.embedding_dim)
            log(f"word vectors: WordLlama token embeddings, {len(self.vocab)} words")
        else:
            return
        with torch.no_grad():
            if vectors.shape != embedding.weight.shape:
                raise ConfigError(
                    f"word2vec vectors are {tuple(vectors.shape)}, the embedding (V, E) is "
                    f"{tuple(embedding.weight.shape)}"
                )
            embedding.weight.copy_(vectors)
            embedding.weight[WORD_PAD].zero_()

    def _train_vectors(self, dim: int, log: Callable[[str], None]) -> Tensor:
        """Skip-gram vectors (V, dim) of the training documents, also kept in ``out_dir/word2vec.pt``."""
        sentences = [self.vocab.encode(s) for d in self.train_docs for s in d.sentences]
        vectors, stats = train_word2vec(
            sentences,
            len(self.vocab),
            dim,
            epochs=self.config.training.word2vec_epochs,
            seed=self.config.training.seed,
            log=log,
        )
        out = Path(self.config.training.out_dir)
        out.mkdir(parents=True, exist_ok=True)
        atomic_torch_save(
            {"words": self.vocab.words, "vectors": vectors, "stats": asdict(stats)}, out / "word2vec.pt"
        )
        log(f"word2vec: {stats.pairs:,} pairs in {stats.seconds:.0f} s, final loss {stats.final_loss}")
        return vectors

    def _load_vectors(self, path: Path) -> Tensor:
        if not path.is_file():
            raise ConfigError(f"training.word2vec_vectors: {path} does not exist (a run's word2vec.pt)")
        saved = torch.load(path, map_location="cpu", weights_only=True)
        if saved.get("words") != self.vocab.words:
            raise ConfigError(
                f"training.word2vec_vectors: {path} was trained for another vocabulary "
                f"({len(saved.get('words') or [])} words, this data has {len(self.vocab)})"
            )
        return saved["vectors"]

    def payload(self) -> dict[str, Any]:
        weights = None if self.weights is None else self.weights.tolist()
        return {"vocabulary": self.vocab.words, "labels": self.labels, "class_weights": weights}
