"""Translate with a trained checkpoint: batched greedy or beam search, with attention."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from .data.batching import make_source
from .data.parallel import normalize
from .data.tokenizer import SubwordTokenizer
from .decoding import beam_search, greedy_search
from .models import build_model
from .training.checkpoint import load_checkpoint
from .training.config import ExperimentConfig, from_dict


@dataclass
class Translation:
    """One translated sentence. ``attention`` is (T, S): target tokens (with </s>) x source tokens."""

    source: str
    translation: str
    source_tokens: list[str]
    target_tokens: list[str]
    attention: np.ndarray
    score: float
    alternatives: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source, "translation": self.translation,
            "source_tokens": self.source_tokens, "target_tokens": self.target_tokens,
            "attention": [[round(float(x), 5) for x in row] for row in self.attention],
            "score": round(self.score, 5), **({"alternatives": self.alternatives} if self.alternatives else {}),
        }


class Translator:
    """A model, its tokenizer and its config, loaded from one checkpoint file."""

    def __init__(self, model: nn.Module, tokenizer: SubwordTokenizer, config: ExperimentConfig,
                 path: str = "", max_source_tokens: int = 200) -> None:
        self.model, self.tokenizer, self.config, self.path = model.eval(), tokenizer, config, path
        self.max_source_tokens = max_source_tokens

    @classmethod
    def from_checkpoint(cls, path: str | Path) -> Translator:
        ckpt = load_checkpoint(path)
        config = from_dict(ExperimentConfig, ckpt["config"])
        if config.task != "translation":
            raise ValueError(f"{path} is a {config.task} model, not a translation model")
        tokenizer = SubwordTokenizer(ckpt["tokenizer"])
        model = build_model(config.model, len(tokenizer), target_ids=ckpt.get("target_ids"))
        model.load_state_dict({k: v.float() for k, v in ckpt["model"].items()})
        return cls(model, tokenizer, config, str(path))

    def _encode(self, text: str) -> list[int]:
        ids = self.tokenizer.encode(text)
        if len(ids) > self.max_source_tokens:
            warnings.warn(f"source of {len(ids)} subwords truncated to {self.max_source_tokens}", stacklevel=3)
            ids = ids[: self.max_source_tokens]
        return ids

    @torch.no_grad()
    def translate(self, sentences: Sequence[str], beam: int = 5, batch_size: int = 64, alpha: float = 1.0,
                  n_best: int = 1) -> list[Translation]:
        """Translate sentences in length-sorted batches; output order = input order.

        Empty (or whitespace-only) sentences give empty translations without running the model.
        """
        texts = [normalize(s) for s in sentences]
        encoded = [self._encode(t) if t else [] for t in texts]
        order = sorted((i for i, t in enumerate(texts) if t), key=lambda i: len(encoded[i]))
        results: list[Translation | None] = [None] * len(texts)
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            src, src_mask = make_source([encoded[i] for i in chunk])
            if beam <= 1:
                hyps = [[h] for h in greedy_search(self.model, src, src_mask)]
            else:
                hyps = beam_search(self.model, src, src_mask, beam_size=beam, alpha=alpha, n_best=n_best)
            for i, nbest in zip(chunk, hyps):
                results[i] = self._result(sentences[i], encoded[i], nbest)
        for i, text in enumerate(texts):
            if results[i] is None:
                results[i] = Translation(sentences[i], "", [], [], np.zeros((0, 0), dtype=np.float32), 0.0)
        return [r for r in results if r is not None]

    def _result(self, source: str, src_ids: list[int], nbest: list[Any]) -> Translation:
        best = nbest[0]
        return Translation(
            source=source,
            translation=self.tokenizer.decode(best.tokens),
            source_tokens=self.tokenizer.pieces(src_ids) + ["</s>"],
            target_tokens=self.tokenizer.pieces(best.tokens) + ["</s>"],
            attention=best.attention.float().numpy(),
            score=best.score,
            alternatives=[self.tokenizer.decode(h.tokens) for h in nbest[1:]],
        )
