"""Translate with a trained checkpoint: batched greedy or beam search, with attention."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from .config import ExperimentConfig
from .data.batching import make_batch
from .data.tokenizer import SubwordTokenizer, vocabularies_from
from .decoding import TorchStepper
from .device import model_device, resolve_device, to_device
from .errors import DeviceError
from .log import progress
from .models.build import build_model, load_for_inference, restore
from .results import Translation, TranslatorBase, check_heads

__all__ = ["Translation", "Translator"]


class Translator(TranslatorBase):
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
            raise DeviceError("int8 weights run on the CPU only; use --device cpu")
        model = restore(model, ckpt, int8).to(on)
        return cls(model, source, config, str(path), target_tokenizer=target)

    @property
    def attention_layers(self) -> int:
        """Decoder layers with their own cross-attention (0 for an RNN: one map per step)."""
        return int(getattr(self.model, "attention_layers", 0))

    @property
    def attention_heads(self) -> int:
        return int(getattr(self.model, "attention_heads", 1))

    def _stepper(self) -> TorchStepper:
        return TorchStepper(self.model, model_device(self.model))

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
        src_ids, tgt_ids = self.pair_ids(sources, targets)
        out: list[tuple[list[str], list[str], np.ndarray]] = []
        for start in progress(range(0, len(sources), batch_size), -(-len(sources) // batch_size), "aligning"):
            chunk = range(start, min(start + batch_size, len(sources)))
            batch = make_batch([src_ids[i] for i in chunk], [tgt_ids[i] for i in chunk])
            maps = (
                self._maps(to_device(batch, model_device(self.model)), layer, heads).float().cpu()
            )  # (B, T, S)
            out += [self.pair_maps(src_ids[i], tgt_ids[i], maps[row].numpy()) for row, i in enumerate(chunk)]
        return out

    def _maps(self, batch: Any, layer: int | None, heads: Sequence[int] | None) -> torch.Tensor:
        default = int(getattr(self.model, "attention_layer", -1))
        chosen = check_heads(layer, heads, self.attention_layers, self.attention_heads, default)
        if not self.attention_layers:
            return self.model(batch.src, batch.src_mask, batch.tgt_in).attention
        maps = self.model(batch.src, batch.src_mask, batch.tgt_in, all_layers=True).layer_attention[chosen]
        return (maps[:, list(heads)] if heads else maps).mean(1)  # (B, T, S)

    def layer_attention(self, result: Translation) -> np.ndarray | None:
        """Every decoder layer's and head's cross-attention for a translation: (L, H, T, S); None for RNNs."""
        if not self.attention_layers:
            return None
        src_ids, tgt_ids = self.result_ids(result)
        batch = to_device(make_batch([src_ids], [tgt_ids]), model_device(self.model))
        with torch.no_grad():
            out = self.model(batch.src, batch.src_mask, batch.tgt_in, all_layers=True)
        return torch.stack([m[0] for m in out.layer_attention]).float().cpu().numpy()
