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

from .config import ExperimentConfig
from .data.batching import make_batch, make_source
from .data.parallel import normalize
from .data.tokenizer import SubwordTokenizer, vocabularies_from
from .decoding import beam_search, greedy_search
from .device import model_device, resolve_device, to_device
from .models.build import build_model, load_for_inference, restore


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
            "source": self.source,
            "translation": self.translation,
            "source_tokens": self.source_tokens,
            "target_tokens": self.target_tokens,
            "attention": [[round(float(x), 5) for x in row] for row in self.attention],
            "score": round(self.score, 5),
            **({"alternatives": self.alternatives} if self.alternatives else {}),
        }


class Translator:
    """A model, its tokenizers and its config, loaded from one checkpoint file.

    ``tokenizer`` encodes sources; ``target_tokenizer`` (default: the same joint model) targets.
    """

    def __init__(
        self,
        model: nn.Module,
        tokenizer: SubwordTokenizer,
        config: ExperimentConfig,
        path: str = "",
        max_source_tokens: int = 200,
        target_tokenizer: SubwordTokenizer | None = None,
    ) -> None:
        self.model, self.tokenizer, self.config, self.path = model.eval(), tokenizer, config, path
        self.target_tokenizer = target_tokenizer or tokenizer
        self.max_source_tokens = max_source_tokens

    @classmethod
    def from_checkpoint(cls, path: str | Path, int8: bool = False, device: str = "cpu") -> Translator:
        """``int8``: decode with int8 weights (``models.quantize``), faster on CPU for small batches.
        ``device``: cpu, cuda[:N] or auto (int8 weights are CPU-only)."""
        ckpt, config = load_for_inference(path, "translation")
        source, target = vocabularies_from(ckpt)
        src_vocab_size = None if source is target else len(source)
        model = build_model(
            config.model, len(target), target_ids=ckpt.get("target_ids"), src_vocab_size=src_vocab_size
        )
        on = resolve_device(device)
        if int8 and on.type != "cpu":
            raise ValueError("int8 weights run on the CPU only; use --device cpu")
        model = restore(model, ckpt, int8).to(on)
        return cls(model, source, config, str(path), target_tokenizer=target)

    @property
    def attention_layers(self) -> int:
        """Decoder layers with their own cross-attention (0 for an RNN: one map per step)."""
        return int(getattr(self.model, "attention_layers", 0))

    @property
    def attention_heads(self) -> int:
        return int(getattr(self.model, "attention_heads", 1))

    def _encode(self, text: str) -> list[int]:
        ids = self.tokenizer.encode(text)
        if len(ids) > self.max_source_tokens:
            warnings.warn(
                f"source of {len(ids)} subwords truncated to {self.max_source_tokens}", stacklevel=3
            )
            ids = ids[: self.max_source_tokens]
        return ids

    @torch.no_grad()
    def translate(
        self,
        sentences: Sequence[str],
        beam: int = 5,
        batch_size: int = 64,
        alpha: float = 1.0,
        n_best: int = 1,
    ) -> list[Translation]:
        """Translate sentences in length-sorted batches; output order = input order.

        Empty (or whitespace-only) sentences give empty translations without running the model.
        """
        texts = [normalize(s) for s in sentences]
        encoded = [self._encode(t) if t else [] for t in texts]
        order = sorted((i for i, t in enumerate(texts) if t), key=lambda i: len(encoded[i]))
        results: list[Translation | None] = [None] * len(texts)
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            src, src_mask = to_device(make_source([encoded[i] for i in chunk]), model_device(self.model))
            if beam <= 1:
                hyps = [[h] for h in greedy_search(self.model, src, src_mask)]
            else:
                hyps = beam_search(self.model, src, src_mask, beam_size=beam, alpha=alpha, n_best=n_best)
            for i, nbest in zip(chunk, hyps):
                results[i] = self._result(sentences[i], encoded[i], nbest)
        for i in range(len(texts)):
            if results[i] is None:
                results[i] = Translation(sentences[i], "", [], [], np.zeros((0, 0), dtype=np.float32), 0.0)
        return [r for r in results if r is not None]

    def _result(self, source: str, src_ids: list[int], nbest: list[Any]) -> Translation:
        best = nbest[0]
        return Translation(
            source=source,
            translation=self.target_tokenizer.decode(best.tokens),
            source_tokens=self.tokenizer.pieces(src_ids) + ["</s>"],
            target_tokens=self.target_tokenizer.pieces(best.tokens) + ["</s>"],
            attention=best.attention.float().numpy(),
            score=best.score,
            alternatives=[self.target_tokenizer.decode(h.tokens) for h in nbest[1:]],
        )

    @torch.no_grad()
    def forced_attention(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        layer: int | None = None,
        heads: Sequence[int] | None = None,
        batch_size: int = 64,
    ) -> list[tuple[list[str], list[str], np.ndarray]]:
        """Attention while the model is forced to produce the given targets (teacher forcing).

        Returns per pair (source pieces + </s>, target pieces + </s>, attention (T, S)). For a
        Transformer, ``layer`` and ``heads`` choose which cross-attention maps are averaged
        (default: the model's ``attention_layer``, all heads); for an RNN they must be None.
        """
        if len(sources) != len(targets):
            raise ValueError(f"{len(sources)} sources but {len(targets)} targets")
        src_ids = [self._encode(normalize(s)) for s in sources]
        tgt_ids = [self.target_tokenizer.encode(normalize(t)) for t in targets]
        out: list[tuple[list[str], list[str], np.ndarray]] = []
        for start in range(0, len(sources), batch_size):
            chunk = range(start, min(start + batch_size, len(sources)))
            batch = make_batch([src_ids[i] for i in chunk], [tgt_ids[i] for i in chunk])
            maps = (
                self._maps(to_device(batch, model_device(self.model)), layer, heads).float().cpu()
            )  # (B, T, S)
            for row, i in enumerate(chunk):
                s, t = len(src_ids[i]) + 1, len(tgt_ids[i]) + 1
                out.append(
                    (
                        self.tokenizer.pieces(src_ids[i]) + ["</s>"],
                        self.target_tokenizer.pieces(tgt_ids[i]) + ["</s>"],
                        maps[row, :t, :s].numpy(),
                    )
                )
        return out

    def _maps(self, batch: Any, layer: int | None, heads: Sequence[int] | None) -> torch.Tensor:
        if not self.attention_layers:
            if layer is not None or heads:
                raise ValueError("--layer/--heads apply to Transformer models only")
            return self.model(batch.src, batch.src_mask, batch.tgt_in).attention
        out = self.model(batch.src, batch.src_mask, batch.tgt_in, all_layers=True)
        n_layers = len(out.layer_attention)
        chosen = int(getattr(self.model, "attention_layer", -1)) if layer is None else layer
        if not -n_layers <= chosen < n_layers:
            raise ValueError(f"layer {chosen} out of range: the model has {n_layers} decoder layers")
        maps = out.layer_attention[chosen]  # (B, H, T, S)
        if heads:
            bad = [h for h in heads if not 0 <= h < maps.shape[1]]
            if bad:
                raise ValueError(f"heads {bad} out of range 0..{maps.shape[1] - 1}")
            maps = maps[:, list(heads)]
        return maps.mean(1)

    def layer_attention(self, result: Translation) -> np.ndarray | None:
        """Every decoder layer's and head's cross-attention for a translation: (L, H, T, S); None for RNNs."""
        if not self.attention_layers:
            return None
        src_ids = self._encode(normalize(result.source))
        tgt_ids = self.target_tokenizer.encode(result.translation)
        batch = to_device(make_batch([src_ids], [tgt_ids]), model_device(self.model))
        with torch.no_grad():
            out = self.model(batch.src, batch.src_mask, batch.tgt_in, all_layers=True)
        return torch.stack([m[0] for m in out.layer_attention]).float().cpu().numpy()
