"""Encoder classifiers from Hugging Face (``AutoModelForSequenceClassification``: BERT, RoBERTa,
DistilBERT, ...) as a ``ClassifierBase``: labels, probabilities, and the words' weights.

A document is one sequence of the tokenizer's words (pieces grouped by ``attnkit.data.words``, special
tokens left out). A word's weight is the attention the first token ([CLS], <s>: what the classification
head reads) pays to its pieces in the last layer, averaged over heads, renormalized over the words;
``layer_attention`` gives every layer's and head's self-attention (L, H, T, T) over the pieces. Words past
the model's length are unread (weight 0, counted).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..classify_base import ClassifierBase
from ..data.documents import Document
from ..data.words import group_words, special_words, word_groups
from ..errors import UsageError
from .loading import load_model


def position_offset(model: Any) -> int:
    """Positions a model never gives a token: RoBERTa-style embeddings count from ``padding_idx + 1``, so
    a 130-position RoBERTa reads 128 tokens (BERT: 0)."""
    embeddings = getattr(getattr(model, "base_model", model), "embeddings", None)
    table = getattr(embeddings, "position_embeddings", None)
    padding = getattr(table, "padding_idx", None)
    return int(padding) + 1 if padding is not None else 0


class HFClassifier(ClassifierBase):
    """A Hugging Face sequence classifier and its tokenizer, from a folder (or Hub id)."""

    backend = "hf"

    def __init__(self, model: Any, tokenizer: Any, path: str = "") -> None:
        self.model, self.tokenizer, self.path = model.eval(), tokenizer, path
        config = model.config
        problem = getattr(config, "problem_type", None)
        if problem in ("regression", "multi_label_classification") or config.num_labels < 2:
            kind = (
                "a regression head (one score)"
                if problem == "regression" or config.num_labels < 2
                else ("a multi-label head (independent sigmoids)")
            )
            raise UsageError(
                f"{path}: {kind}; classify reads one softmax over two or more labels "
                f"(config.json problem_type {problem!r}, num_labels {config.num_labels})"
            )
        self.labels = [str(config.id2label[i]) for i in range(config.num_labels)]
        self.class_weights = [1.0] * len(self.labels)
        positions = (getattr(config, "max_position_embeddings", None) or 512) - position_offset(model)
        self.max_tokens = int(min(positions, getattr(tokenizer, "model_max_length", positions)))
        self.limits = (1, 10**9)  # one sequence; the token limit is applied to pieces (_pieces)
        self.device = next(model.parameters()).device

    @classmethod
    def from_pretrained(cls, path_or_name: str | Path, device: str = "cpu") -> HFClassifier:
        return cls(*load_model("AutoModelForSequenceClassification", path_or_name, device))

    def _pieces(self, text: str, truncate: bool = True) -> list[str]:
        ids = self.tokenizer(text, truncation=truncate, max_length=self.max_tokens)["input_ids"]
        return list(self.tokenizer.convert_ids_to_tokens(ids))

    def documents(self, texts: Sequence[str]) -> list[Document]:
        """Each text as one sentence of the tokenizer's words (all of them, read or not)."""
        docs = []
        for text in texts:
            pieces = self._pieces(text, truncate=False)
            words = [w for w, special in zip(group_words(pieces), special_words(pieces)) if not special]
            docs.append(Document(text, -1, [words or [pieces[0]]]))
        return docs

    def classify_documents(self, docs: Sequence[Document], batch_size: int = 64) -> list[Any]:
        """Documents read by another tokenizer (a data file's) are re-read as this model's words."""
        own = [replace(mine, label=d.label) for d, mine in zip(docs, self.documents([d.text for d in docs]))]
        found = super().classify_documents(own, batch_size)
        return [replace(r, unread_words=self._unread(d.text)) for r, d in zip(found, own)]

    def _unread(self, text: str) -> int:
        """Words past the model's positions (``max_tokens`` pieces, specials included)."""
        words = lambda pieces: sum(not s for s in special_words(pieces))  # noqa: E731
        return words(self._pieces(text, truncate=False)) - words(self._pieces(text))

    @torch.no_grad()
    def _forward(self, texts: Sequence[str]) -> Any:
        batch = self.tokenizer(
            list(texts), truncation=True, max_length=self.max_tokens, padding=True, return_tensors="pt"
        ).to(self.device)
        return batch, self.model(**batch, output_attentions=True, return_dict=True)

    def _scores(self, docs: Sequence[Document]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Probabilities (B, C), word weights (B, 1, W) and sentence weights (B, 1)."""
        batch, out = self._forward([d.text for d in docs])
        probs = torch.softmax(out.logits.float(), -1).cpu().numpy()
        first = out.attentions[-1].float().mean(1)[:, 0].cpu().numpy()  # (B, T): the first token's row
        width = max(len(d.sentences[0]) for d in docs)
        words = np.zeros((len(docs), 1, width), dtype=np.float32)
        for i, doc in enumerate(docs):
            pieces = self._pieces(doc.text)
            weights = [first[i, g].sum() for g, s in zip(word_groups(pieces), special_words(pieces)) if not s]
            total = float(sum(weights)) or 1.0
            words[i, 0, : len(weights)] = np.asarray(weights, dtype=np.float32) / total
        return probs, words, np.ones((len(docs), 1), dtype=np.float32)

    @property
    def attention_layers(self) -> int:
        return int(self.model.config.num_hidden_layers)

    @property
    def attention_heads(self) -> int:
        return int(self.model.config.num_attention_heads)

    def layer_attention(
        self,
        text: str,
        layers: Sequence[int] | None = None,
        heads: Sequence[int] | None = None,
        dtype: Any = np.float16,
    ) -> tuple[list[str], np.ndarray]:
        """The pieces the model read and the self-attention of the chosen ``layers`` and ``heads`` (all by
        default) over them: (L', H', T, T) in ``dtype`` (float16 by default: a 512-piece input of a
        12 x 12 encoder is 75 MB, not 151). Each layer's weights are taken as its attention module returns
        them, cut and converted at once, so the float32 maps of all layers are never held together."""
        batch = self.tokenizer([text], truncation=True, max_length=self.max_tokens, return_tensors="pt").to(
            self.device
        )
        chosen = (
            list(range(self.attention_layers))
            if layers is None
            else [int(x) % self.attention_layers for x in layers]
        )
        picked = list(heads) if heads else None
        maps = self._recorded(batch, chosen, picked, dtype)
        return self._pieces(text), maps

    @torch.no_grad()
    def _recorded(self, batch: Any, layers: list[int], heads: list[int] | None, dtype: Any) -> np.ndarray:
        modules = [m for m in self.model.modules() if type(m).__name__.endswith("SelfAttention")]
        found: list[np.ndarray] = []

        def keep(module: Any, args: Any, output: Any) -> None:
            index = len(found)
            weights = output[1][0] if isinstance(output, tuple) and len(output) > 1 else None
            if weights is None or weights.dim() != 3:
                found.append(np.zeros(0))
                return
            kept = weights[heads] if heads else weights
            found.append(
                kept.to(torch.float16 if dtype == np.float16 else torch.float32).cpu().numpy()
                if index in layers
                else np.zeros(0)
            )

        if len(modules) != self.attention_layers:  # an architecture without per-layer modules of that name
            out = self.model(**batch, output_attentions=True, return_dict=True)
            stacked = torch.stack([out.attentions[i][0] for i in layers]).float().cpu().numpy()
            return (stacked[:, heads] if heads else stacked).astype(dtype)
        handles = [m.register_forward_hook(keep) for m in modules]
        try:
            self.model(**batch, return_dict=True)
        finally:
            for handle in handles:
                handle.remove()
        return np.stack([found[i] for i in layers]).astype(dtype, copy=False)
