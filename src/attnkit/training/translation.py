"""The translation task: subword data, token batches, label-smoothed loss, dev BLEU."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..config import ExperimentConfig
from ..data.arrays import MAX_SOURCE_TOKENS
from ..data.batching import Batch, TokenBatcher, make_batch, make_source
from ..data.parallel import normalize, read_parallel
from ..data.tokenizer import EOS, UNK, SubwordTokenizer, train_vocabularies
from ..datasets import parallel_split
from ..decoding import greedy_search
from ..device import model_device, to_device
from ..evaluation.metrics import corpus_scores
from ..models.output import IGNORE
from .distributed import unwrap


def load_pairs(config: ExperimentConfig, split: str) -> tuple[list[str], list[str]]:
    """A split from the config's paths, or from the shipped dataset when none are given."""
    paths = config.data.train if split == "train" else config.data.dev
    if paths:
        second = paths[1] if len(paths) > 1 else None
        return read_parallel(paths[0], second, skip_bad_lines=config.data.skip_bad_lines)
    return read_parallel(*parallel_split(config.data.dataset, split))


class TranslationTask:
    @classmethod
    def for_run(cls, config: ExperimentConfig, checkpoint: Any, log: Any = None) -> TranslationTask:
        """The task for a training run (``training.run.make_task`` through ``tasks.TABLE``): a resumed or
        initialized run keeps the checkpoint's vocabularies."""
        if checkpoint is None:
            return cls(config, log=log)
        from ..data.tokenizer import vocabularies_from

        source, target = vocabularies_from(checkpoint)
        return cls(config, source, checkpoint.target_ids, log=log, target_tokenizer=target)

    def __init__(
        self,
        config: ExperimentConfig,
        tokenizer: SubwordTokenizer | None = None,
        target_ids: list[int] | None = None,
        log: Any = print,
        target_tokenizer: SubwordTokenizer | None = None,
    ) -> None:
        """``tokenizer``/``target_tokenizer``: from a checkpoint being resumed; trained here when None
        (``data.vocabulary``: one joint model, or one per side)."""
        self.config = config
        t0 = time.time()
        src, tgt = load_pairs(config, "train")
        if config.data.train_limit:
            src, tgt = src[: config.data.train_limit], tgt[: config.data.train_limit]
        self.dev_src, self.dev_ref = load_pairs(config, "dev")
        if config.training.dev_limit:
            self.dev_src = self.dev_src[: config.training.dev_limit]
            self.dev_ref = self.dev_ref[: config.training.dev_limit]
        if tokenizer is None:
            separate = config.data.vocabulary == "separate"
            tokenizer, target_tokenizer = train_vocabularies(src, tgt, config.data.vocab_size, separate)
        self.tokenizer, self.target_tokenizer = tokenizer, target_tokenizer or tokenizer
        enc_src, enc_tgt = self.tokenizer.encode_batch(src), self.target_tokenizer.encode_batch(tgt)
        self.target_ids = target_ids or sorted({i for ids in enc_tgt for i in ids} | {UNK, EOS})
        self.batcher = self._batcher(enc_src, enc_tgt)
        self.train_text = (src, tgt)  # re-segmented every epoch under data.subword_alpha
        self._sampled: tuple[int, TokenBatcher] | None = None
        dev_src_ids = self.tokenizer.encode_batch(self.dev_src)
        dev_tgt_ids = self.target_tokenizer.encode_batch(self.dev_ref)
        order = sorted(range(len(dev_src_ids)), key=lambda i: len(dev_src_ids[i]))
        self.dev_batches = [
            make_batch(
                [dev_src_ids[i] for i in order[s : s + 100]], [dev_tgt_ids[i] for i in order[s : s + 100]]
            )
            for s in range(0, len(order), 100)
        ]
        log(
            f"data: {len(self.batcher)} training pairs, {len(self.dev_src)} dev pairs, "
            f"vocabulary {self._describe_vocabulary()}, prepared in {time.time() - t0:.1f}s"
        )

    def _describe_vocabulary(self) -> str:
        if self.joint:
            return f"{len(self.tokenizer)} joint"
        return f"{len(self.tokenizer)} source + {len(self.target_tokenizer)} target"

    @property
    def joint(self) -> bool:
        return self.tokenizer is self.target_tokenizer

    @property
    def vocab_size(self) -> int:
        """Size of the target (and, when joint, shared) embedding."""
        return len(self.target_tokenizer)

    @property
    def src_vocab_size(self) -> int | None:
        """Size of a separate source embedding; None when the vocabulary is joint."""
        return None if self.joint else len(self.tokenizer)

    def _batcher(self, src: list[list[int]], tgt: list[list[int]]) -> TokenBatcher:
        data, seed = self.config.data, self.config.training.seed
        return TokenBatcher(src, tgt, data.max_tokens, seed, max_len=data.max_len)

    def epoch_batcher(self, epoch: int) -> TokenBatcher:
        """The fixed segmentation, or with ``data.subword_alpha`` one sampled for this epoch: a function
        of (seed, epoch), so every DDP rank and a resumed run see the same pieces."""
        alpha = self.config.data.subword_alpha
        if not alpha:
            return self.batcher
        if self._sampled is None or self._sampled[0] != epoch:
            seed = self.config.training.seed * 100_003 + epoch
            src = self.tokenizer.sample_batch(self.train_text[0], alpha, seed)
            tgt = self.target_tokenizer.sample_batch(self.train_text[1], alpha, seed + 1)
            self._sampled = (epoch, self._batcher(src, tgt))
        return self._sampled[1]

    def batches(self, epoch: int, start: int, rank: int, world_size: int) -> Iterator[Batch]:
        return self.epoch_batcher(epoch).batches(epoch, start, rank, world_size)

    def _loss(self, model: nn.Module, batch: Batch, smoothing: float) -> Tensor:
        logits = model(batch.src, batch.src_mask, batch.tgt_in).logits  # (B, T, V_out)
        output: Any = unwrap(model).output
        targets = output.targets(batch.tgt_out)  # (B, T); padding -> IGNORE
        return F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]),
            targets.reshape(-1),
            ignore_index=IGNORE,
            reduction="sum",
            label_smoothing=smoothing,
        )

    def loss(self, model: nn.Module, batch: Batch) -> tuple[Tensor, int, int]:
        loss = self._loss(model, batch, self.config.training.label_smoothing)
        return loss, int(batch.tgt_mask.sum()), batch.n_tokens

    @torch.no_grad()
    def validate(self, model: nn.Module) -> dict[str, float]:
        total, count = 0.0, 0
        on = model_device(model)
        for batch in self.dev_batches:
            batch = to_device(batch, on)
            total += float(self._loss(model, batch, 0.0))
            count += int(batch.tgt_mask.sum())
        metrics = {
            "dev_loss": round(total / count, 4),
            "dev_ppl": round(float(torch.tensor(total / count).exp()), 2),
        }
        if self.config.training.validate_bleu:
            scores = corpus_scores(self._greedy_dev(model, on), self.dev_ref)
            metrics.update(dev_bleu=round(scores.bleu, 2), dev_chrf=round(scores.chrf, 2))
            model.train()
        metrics["score"] = metrics.get("dev_bleu", -metrics["dev_loss"])
        return metrics

    def _greedy_dev(self, model: nn.Module, on: torch.device) -> list[str]:
        """Greedy translations of the dev sources (length-sorted batches of 100), in dev order."""
        ids = [self.tokenizer.encode(normalize(s)) for s in self.dev_src]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        hyps = [""] * len(ids)
        for start in range(0, len(order), 100):
            chunk = [i for i in order[start : start + 100] if ids[i]]
            if chunk:
                src, src_mask = to_device(make_source([ids[i][:MAX_SOURCE_TOKENS] for i in chunk]), on)
                for i, hyp in zip(chunk, greedy_search(model, src, src_mask)):
                    hyps[i] = self.target_tokenizer.decode(hyp.tokens)
        return hyps

    def payload(self) -> dict[str, Any]:
        separate = {} if self.joint else {"target_tokenizer": self.target_tokenizer.model_proto}
        return {"tokenizer": self.tokenizer.model_proto, "target_ids": self.target_ids, **separate}
