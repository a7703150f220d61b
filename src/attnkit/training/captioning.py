"""The captioning task (Show, Attend and Tell): generated digit strings or a user's captioned images.

Loss per batch: cross-entropy of the caption words (and </s>), plus ``training.attention_penalty`` times
the doubly stochastic penalty (Xu et al. 2015, eq. 14); for hard attention, the REINFORCE term with a
moving-average baseline and an entropy bonus (sec. 4.1). Dev: greedy captions scored by exact match
(the checkpoint score), per-word accuracy and, for digit strings, attention correctness.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..checkpoint import Checkpoint
from ..config import ExperimentConfig
from ..data.captions import read_captions
from ..data.images import fit_array, read_image
from ..datasets import digits
from ..errors import ConfigError
from ..log import log
from ..models.captioner import doubly_stochastic_penalty
from ..vocab import BOS, EOS, PAD, UNK

SPECIALS = ["<unk>", "<pad>", "<s>", "</s>"]


@dataclass
class CaptionBatch:
    """images (B, C, H, W) float in [0, 1]; inputs (B, T) <s> w_1..w_n; targets (B, T) w_1..w_n </s>;
    both padded with <pad>."""

    images: Tensor
    inputs: Tensor
    targets: Tensor


def make_caption_batch(images: list[np.ndarray], captions: list[list[int]]) -> CaptionBatch:
    length = max(len(c) for c in captions) + 1
    inputs = np.full((len(captions), length), PAD, dtype=np.int64)
    targets = np.full((len(captions), length), PAD, dtype=np.int64)
    for i, ids in enumerate(captions):
        inputs[i, : len(ids) + 1] = [BOS, *ids]
        targets[i, : len(ids) + 1] = [*ids, EOS]
    return CaptionBatch(
        torch.from_numpy(np.stack(images)), torch.from_numpy(inputs), torch.from_numpy(targets)
    )


@dataclass
class Example:
    """One image with one caption; boxes: each word's object box when known (digit strings)."""

    image: Any  # (H, W) uint8 array or a path
    words: tuple[str, ...]
    boxes: tuple[tuple[int, int, int, int], ...] | None = None


def _digit_examples(strings: list[digits.DigitString]) -> list[Example]:
    return [Example(s.image, tuple(s.caption.split()), s.boxes) for s in strings]


class CaptioningTask:
    @classmethod
    def for_run(
        cls, config: ExperimentConfig, checkpoint: Checkpoint | None, log: Any = None
    ) -> CaptioningTask:
        """The task for a training run (``training.run.make_task`` through ``tasks.TABLE``)."""
        return cls(config, checkpoint)

    def __init__(self, config: ExperimentConfig, checkpoint: Checkpoint | None = None) -> None:
        self.config = config
        c = config.model.captioner
        self.shape = (c.channels, c.height, c.width)
        data = config.data
        if data.train:
            self.train, self.dev = self._user_examples(data.train, data.dev)
            counts: dict[str, int] = {}
            for ex in self.train:
                for w in ex.words:
                    counts[w] = counts.get(w, 0) + 1
            kept = sorted((w for w, n in counts.items() if n >= data.min_freq), key=lambda w: (-counts[w], w))
            words = SPECIALS + kept
        elif data.dataset == "digits":
            self.train = []
            self.dev = _digit_examples(digits.digit_strings("dev", data.dev_images))
            words = SPECIALS + list(digits.WORDS)
        else:
            raise ConfigError(
                f"data.dataset {data.dataset!r} is not a captioning set: use digits, or give data.train "
                "[captions file] or [captions file, image folder]"
            )
        self.words = list(checkpoint.vocabulary or []) if checkpoint else words
        self.index = {w: i for i, w in enumerate(self.words)}
        log.info(f"data: {len(self.dev)} dev images, {len(self.words)} words")

    def _user_examples(self, train: list[str], dev: list[str]) -> tuple[list[Example], list[Example]]:
        def examples(files: list[str]) -> list[Example]:
            items = read_captions(files[0], files[1] if len(files) > 1 else None)
            return [Example(item.path, words) for item in items for words in item.captions]

        if not dev:
            raise ConfigError("data.dev: give the dev captions file (dev chooses the checkpoint)")
        return examples(train), examples(dev)

    @property
    def vocab_size(self) -> int:
        return len(self.words)

    def encode(self, words: tuple[str, ...]) -> list[int]:
        return [self.index.get(w, UNK) for w in words][: self.config.data.max_len]

    def pixels(self, ex: Example) -> np.ndarray:
        if isinstance(ex.image, np.ndarray):
            return fit_array(ex.image, *self.shape)
        return read_image(ex.image, *self.shape)[0]

    def batches(self, epoch: int, start: int, rank: int, world_size: int) -> Iterator[CaptionBatch]:
        size = self.config.data.batch_images
        if self.train:
            order = list(range(len(self.train)))
            random.Random(self.config.training.seed * 100_003 + epoch).shuffle(order)
            plan = [order[s : s + size] for s in range(0, len(order), size)]
            for ids in plan[start:]:
                mine = [self.train[i] for i in ids[rank::world_size] or ids[:1]]
                yield make_caption_batch([self.pixels(e) for e in mine], [self.encode(e.words) for e in mine])
            return
        seed = 1000 + self.config.training.seed * 1000 + epoch  # training images: new ones every epoch
        for b in range(start, self.config.data.images_per_epoch // size):
            strings = digits.digit_strings("train", size, seed=seed, start=b * size)[rank::world_size]
            mine = _digit_examples(strings)
            yield make_caption_batch([self.pixels(e) for e in mine], [self.encode(e.words) for e in mine])

    def loss(self, model: nn.Module, batch: CaptionBatch) -> tuple[Tensor, int, int]:
        captioner: Any = getattr(model, "module", model)  # the Captioner inside DistributedDataParallel
        hard = bool(getattr(captioner, "hard", False))
        logits, alphas, log_chosen = model(batch.images, batch.inputs, sample=hard)
        mask = batch.targets != PAD  # (B, T)
        smoothing = self.config.training.label_smoothing
        flat = logits.reshape(-1, logits.shape[-1])
        loss = F.cross_entropy(
            flat, batch.targets.reshape(-1), ignore_index=PAD, reduction="sum", label_smoothing=smoothing
        )
        cfg = self.config.training
        if cfg.attention_penalty:
            loss = loss + cfg.attention_penalty * doubly_stochastic_penalty(alphas, mask)
        if hard:
            loss = loss + self._reinforce(captioner, logits, batch.targets, mask, alphas, log_chosen)
        tokens = int(mask.sum())
        return loss, tokens, tokens

    def _reinforce(
        self,
        model: Any,
        logits: Tensor,
        targets: Tensor,
        mask: Tensor,
        alphas: Tensor,
        log_chosen: Tensor,
    ) -> Tensor:
        """-w (r - b) sum_t log p(s_t) - entropy_weight * H(alpha): r = log p(y | s) per caption."""
        with torch.no_grad():
            nll = F.cross_entropy(logits.transpose(1, 2), targets, ignore_index=PAD, reduction="none")
            reward = -(nll * mask).sum(1)  # (B,)
            baseline: Tensor = model.reward_baseline
            advantage = reward - baseline
            advantage = advantage / advantage.std().clamp_min(1.0)  # a scale that does not grow with T
            baseline.mul_(0.9).add_(0.1 * reward.mean())
        cfg = self.config.training
        policy = -(advantage[:, None] * log_chosen * mask).sum()
        entropy = -(alphas * torch.log(alphas.clamp_min(1e-12))).sum(-1)
        return cfg.reinforce_weight * policy - cfg.entropy_weight * (entropy * mask).sum()

    def validate(self, model: nn.Module) -> dict[str, float]:
        """Greedy dev captions through the torch backend's evaluation (``CaptionerBase.evaluate``):
        exact match (the checkpoint score), word accuracy and, for digit strings, attention correctness."""
        from ..captioner import Captioner

        captioner = Captioner(model, self.words, self.config)
        report = captioner.evaluate([(e.image, e.words, e.boxes) for e in self.dev])
        model.train()
        metrics = {
            "dev_exact_match": float(report["exact_match"]),
            "dev_token_accuracy": float(report["token_accuracy"]),
            "dev_bleu4": float(report["bleu4"]),
        }
        if report.get("attention_correctness") is not None:
            metrics["dev_attention_correctness"] = float(report["attention_correctness"])
        metrics["score"] = round(metrics["dev_exact_match"] + metrics["dev_token_accuracy"] / 100, 5)
        return metrics

    def pretrain(self, model: nn.Module, log: Any) -> None:
        """Before training from scratch: torchvision's weights into a ResNet backbone, when given."""
        backbone, weights = self.config.model.captioner.backbone, self.config.training.backbone_weights
        if backbone and weights:
            from ..models.backbones import load_torchvision_weights

            count = load_torchvision_weights(model.encoder.trunk, weights)  # type: ignore[union-attr, arg-type]
            log(f"backbone: {count} tensors of {backbone} from {weights}")

    def payload(self) -> dict[str, Any]:
        return {"vocabulary": self.words}
