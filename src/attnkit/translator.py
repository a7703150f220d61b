"""Translate with a trained checkpoint: batched greedy or beam search, with attention."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from torch import nn

from .config import ExperimentConfig
from .data.batching import make_batch
from .data.tokenizer import SubwordTokenizer, vocabularies_from
from .decoding import TorchStepper
from .device import model_device, resolve_device, to_device
from .errors import DeviceError
from .models.build import build_model, load_for_inference, restore
from .results import Translation
from .translate_base import TranslatorBase

__all__ = ["Translation", "Translator"]


class Translator(TranslatorBase):
    """A model, its tokenizers and its config, loaded from one checkpoint file.

    ``tokenizer`` encodes sources; ``target_tokenizer`` (default: the same joint model) targets.
    """

    tokenizer: SubwordTokenizer
    target_tokenizer: SubwordTokenizer

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
        self.returns_self_attention = bool(self.attention_layers)

    @classmethod
    def from_checkpoint(cls, path: str | Path, int8: bool = False, device: str = "cpu") -> Translator:
        """``int8``: decode with int8 weights (``models.quantize``), faster on CPU for small batches.
        ``device``: cpu, cuda[:N] or auto (int8 weights are CPU-only)."""
        ckpt, config = load_for_inference(path, "translation")
        source, target = vocabularies_from(ckpt)
        src_vocab_size = None if source is target else len(source)
        model = build_model(
            config.model, len(target), target_ids=ckpt.target_ids, src_vocab_size=src_vocab_size
        )
        on = resolve_device(device)
        if int8 and on.type != "cpu":
            raise DeviceError("int8 weights run on the CPU only; use --device cpu")
        model = restore(model, ckpt, int8).to(on)
        return cls(model, source, config, str(path), target_tokenizer=target)

    backend = "torch"

    @property
    def kind(self) -> str:
        return "transformer" if self.attention_layers else "rnn"

    @property
    def attention_layers(self) -> int:
        """Decoder layers with their own cross-attention (0 for an RNN: one map per step)."""
        return int(getattr(self.model, "attention_layers", 0))

    @property
    def attention_heads(self) -> int:
        return int(getattr(self.model, "attention_heads", 1))

    def _stepper(self) -> TorchStepper:
        return TorchStepper(self.model, model_device(self.model))

    @property
    def default_layer(self) -> int:
        return int(getattr(self.model, "attention_layer", -1))

    def self_attention(self, result: Translation) -> dict[str, np.ndarray] | None:
        """{"encoder": (L, H, S, S), "decoder": (L, H, T, T)} of a Transformer's translation; None (RNN)."""
        if not self.attention_layers:
            return None
        src_ids, tgt_ids = self.result_ids(result)
        batch = to_device(make_batch([src_ids], [tgt_ids]), model_device(self.model))
        maps = getattr(self.model, "self_attention_maps")  # noqa: B009 (a Transformer's method)
        encoder, decoder = maps(batch.src, batch.src_mask, batch.tgt_in)
        stack = lambda maps: torch.stack([m[0] for m in maps]).float().cpu().numpy()  # noqa: E731
        return {"encoder": stack(encoder), "decoder": stack(decoder)}

    @torch.no_grad()
    def _forced_maps(self, src_ids: list[list[int]], tgt_ids: list[list[int]], layers: bool) -> np.ndarray:
        """Shapes: -> (B, T, S), or (B, L, H, T, S) with ``layers`` (see ``TranslatorBase``)."""
        batch = to_device(make_batch(src_ids, tgt_ids), model_device(self.model))
        if not layers:
            if not self.attention_layers:
                return self.model(batch.src, batch.src_mask, batch.tgt_in).attention.float().cpu().numpy()
            maps = self.model(batch.src, batch.src_mask, batch.tgt_in, all_layers=True).layer_attention
            return maps[self.default_layer].mean(1).float().cpu().numpy()
        out = self.model(batch.src, batch.src_mask, batch.tgt_in, all_layers=True)
        return torch.stack(list(out.layer_attention), 1).float().cpu().numpy()  # (B, L, H, T, S)
