"""Attention pooling with a learned context vector, and the two-level hierarchy of HAN.

Yang et al. 2016 (sec. 2.2, eqs. 5-7 and 8-10): ``u_i = tanh(W h_i + b)``,
``a_i = softmax(u_i^T u_w)``, ``v = sum_i a_i h_i``. Used over the words of a sentence and
over the sentences of a document.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .core import AttentionOutput, check_rank, check_same, masked_softmax


class AttentionPooling(nn.Module):
    """Pools a sequence into one vector with a learned query ("context vector" u_w).

    Padding positions (mask False) get exactly zero weight; an all-padding row pools to zeros.

    Shapes:
        states (B, L, D), mask bool (B, L) -> context (B, D), weights (B, L)
    """

    def __init__(self, hidden_size: int, attention_size: int | None = None) -> None:
        super().__init__()
        size = attention_size or hidden_size
        self.hidden_size = hidden_size
        self.proj = nn.Linear(hidden_size, size)
        self.context_vector = nn.Parameter(torch.empty(size).uniform_(-0.1, 0.1))

    def forward(self, states: Tensor, mask: Tensor | None = None) -> AttentionOutput:
        check_rank("states", states, "(B, L, D)")
        check_same("states width D", states.shape[-1], "hidden_size", self.hidden_size)
        if mask is not None and mask.shape != states.shape[:2]:
            raise ValueError(f"mask must be (B, L) = {tuple(states.shape[:2])}, got {tuple(mask.shape)}")
        scores = torch.tanh(self.proj(states)) @ self.context_vector  # (B, L)
        weights = masked_softmax(scores, mask)
        context = torch.bmm(weights.unsqueeze(1), states).squeeze(1)  # (B, D)
        return AttentionOutput(context, weights)

    def forward_tokens(self, states: Tensor, mask: Tensor) -> AttentionOutput:
        """The same pooling with only the real positions' states given: no padded (B, L, D) tensor.

        Shapes: states (T, D) = the states of ``mask``'s True positions in row-major order,
        mask bool (B, L) with T True -> context (B, D), weights (B, L) (0 at padding).
        """
        check_rank("states", states, "(T, D)")
        check_same("states width D", states.shape[-1], "hidden_size", self.hidden_size)
        check_rank("mask", mask, "(B, L)")
        if int(mask.sum()) != states.shape[0]:
            raise ValueError(
                f"states (T, D) = {tuple(states.shape)} must have one row per True of mask (B, L)"
            )
        scores = torch.tanh(self.proj(states)) @ self.context_vector  # (T,)
        padded = scores.new_zeros(mask.shape).masked_scatter(mask, scores)  # (B, L)
        weights = masked_softmax(padded, mask)
        row = mask.nonzero()[:, 0]  # (T,) the row of each real position
        context = states.new_zeros(mask.shape[0], states.shape[-1]).index_add(
            0, row, weights[mask].unsqueeze(-1) * states
        )  # (B, D)
        return AttentionOutput(context, weights)


@dataclass
class HierarchicalOutput:
    """Shapes: logits (B, C), probabilities (B, C), word_weights (B, N, W), sentence_weights (B, N)."""

    logits: Tensor
    probabilities: Tensor
    sentence_weights: Tensor
    word_weights: Tensor


class HierarchicalAttention(nn.Module):
    """The tutorial's two-level attention: words -> sentence vectors -> document vector -> classes.

    This is the attention part of HAN only (no recurrent encoders; see ``attnkit.models.han``).

    Shapes:
        words (B, N, W, Dw), word_mask bool (B, N, W) -> HierarchicalOutput
        (a sentence whose words are all padding is itself treated as padding)
    """

    def __init__(self, word_hidden_size: int, sentence_hidden_size: int, num_classes: int) -> None:
        super().__init__()
        self.word_pool = AttentionPooling(word_hidden_size)
        self.bridge = (
            nn.Identity()
            if word_hidden_size == sentence_hidden_size
            else nn.Linear(word_hidden_size, sentence_hidden_size)
        )
        self.sentence_pool = AttentionPooling(sentence_hidden_size)
        self.classifier = nn.Linear(sentence_hidden_size, num_classes)

    def forward(self, words: Tensor, word_mask: Tensor | None = None) -> HierarchicalOutput:
        check_rank("words", words, "(B, N, W, Dw)")
        batch, n_sent, n_words, width = words.shape
        flat_mask = None if word_mask is None else word_mask.reshape(batch * n_sent, n_words)
        sent = self.word_pool(words.reshape(batch * n_sent, n_words, width), flat_mask)
        sentences = self.bridge(sent.context.view(batch, n_sent, width))  # (B, N, Ds)
        sentence_mask = None if word_mask is None else word_mask.any(-1)  # (B, N)
        doc = self.sentence_pool(sentences, sentence_mask)
        logits = self.classifier(doc.context)  # (B, C)
        assert sent.weights is not None and doc.weights is not None
        return HierarchicalOutput(
            logits, torch.softmax(logits, -1), doc.weights, sent.weights.view(batch, n_sent, n_words)
        )
