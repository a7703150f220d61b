"""Hierarchical Attention Network for document classification (Yang et al., NAACL 2016).

  1. word encoder: embeddings -> bidirectional GRU over each sentence's words (sec. 2.2, eq. 1-4)
  2. word attention: AttentionPooling -> one vector per sentence (eq. 5-7)
  3. sentence encoder: bidirectional GRU over the sentence vectors (eq. 8-9)
  4. sentence attention: AttentionPooling -> the document vector (eq. 10)
  5. classifier: dropout + linear -> logits (eq. 11)
Training only: ``word_dropout`` blanks whole words (their vectors set to 0) with that probability.
Padding words and padding sentences get exactly zero attention: empty sentences are never fed to
the word GRU, and both poolings are masked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from ..attention import AttentionPooling
from ..attention.core import check_rank
from ..errors import ConfigError
from ..vocab import WORD_PAD
from .bigru import BiGRU

Encoder = Callable[[Tensor, Tensor], Tensor]  # (x (R, L, E), lengths (R,)) -> states (R, L, 2D)


@dataclass
class HANOutput:
    """Shapes: logits (B, C), word_weights (B, N, W), sentence_weights (B, N)."""

    logits: Tensor
    word_weights: Tensor
    sentence_weights: Tensor
    parts: HANParts | None = None


@dataclass
class HANParts:
    """What attention-map methods read (``explain.attribution``). Shapes: word_states h_ij
    (B, N, W, 2Dw) (values of the word attention; a copy, outside the autograd graph), sentences c_i
    (B, N, 2Dw) (its outputs, in the graph), sentence_states s_i (B, N, 2Ds), document d (B, 2Ds)."""

    word_states: Tensor
    sentences: Tensor
    sentence_states: Tensor
    document: Tensor


class HAN(nn.Module):
    """Shapes: words (B, N, W) ids, word_mask (B, N, W) bool -> HANOutput."""

    def __init__(
        self,
        vocab_size: int,
        num_classes: int = 5,
        embed_size: int = 100,
        word_hidden: int = 50,
        sentence_hidden: int = 50,
        dropout: float = 0.3,
        word_dropout: float = 0.0,
    ) -> None:
        super().__init__()
        if not 0.0 <= word_dropout < 1.0:
            raise ConfigError(f"word_dropout must be in [0, 1), got {word_dropout}")
        self.word_dropout = word_dropout
        self.embedding = nn.Embedding(vocab_size, embed_size, padding_idx=WORD_PAD)
        self.word_encoder = BiGRU(embed_size, word_hidden)
        self.word_attention = AttentionPooling(2 * word_hidden)
        self.sentence_encoder = BiGRU(2 * word_hidden, sentence_hidden)
        self.sentence_attention = AttentionPooling(2 * sentence_hidden)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(2 * sentence_hidden, num_classes)

    def forward(self, words: Tensor, word_mask: Tensor) -> HANOutput:
        check_rank("words", words, "(B, N, W)")
        return self.forward_embedded(self.embedding(words), word_mask)

    def forward_embedded(self, embedded: Tensor, word_mask: Tensor, parts: bool = False) -> HANOutput:
        """``forward`` from word embeddings, for attribution methods (``evaluation.faithfulness``):
        gradients and integrated-gradient paths start here. The embedding of a padding word is
        ignored. ``parts``: also return ``HANParts``.
        Shapes: embedded (B, N, W, E), word_mask (B, N, W) bool -> HANOutput."""
        check_rank("embedded", embedded, "(B, N, W, E)")
        if word_mask.shape != embedded.shape[:3]:
            raise ValueError(
                f"word_mask must match words (B, N, W) = {tuple(embedded.shape[:3])}, "
                f"got {tuple(word_mask.shape)}"
            )
        if bool((word_mask[..., 1:] & ~word_mask[..., :-1]).any()):
            raise ValueError("word_mask (B, N, W) must mark each sentence's first words (left-aligned)")
        batch, n_sent, n_words = word_mask.shape
        sentence_mask = word_mask.any(-1)  # (B, N)
        flat_mask = word_mask.view(-1, n_words)  # (B*N, W)
        real = sentence_mask.view(-1).nonzero().squeeze(1)  # indices of non-empty sentences
        real_mask = flat_mask.index_select(0, real)  # (S, W), S real sentences
        # 1-2. encode and pool only the real words of the real sentences, then scatter back into (B, N, ...).
        tokens = self.dropout(embedded[word_mask])  # (T, E), T real words in order
        if self.training and self.word_dropout > 0:  # whole words blanked (zero vectors), not rescaled
            keep = torch.rand(tokens.shape[0], 1, device=tokens.device) >= self.word_dropout  # (T, 1)
            tokens = tokens * keep
        hidden = 2 * self.word_encoder.rnn.hidden_size
        if tokens.shape[0]:
            encoded = self.word_encoder.forward_tokens(tokens, real_mask.sum(1))  # (T, 2Dw)
            pooled = self.word_attention.forward_tokens(encoded, real_mask)  # (S, 2Dw), (S, W)
            assert pooled.weights is not None
            context, weights = pooled.context, pooled.weights
        else:  # no real word anywhere in the batch (every document erased)
            encoded = tokens.new_zeros(0, hidden)
            context, weights = tokens.new_zeros(0, hidden), tokens.new_zeros(0, n_words)
        sentences = tokens.new_zeros(batch * n_sent, hidden).index_copy(0, real, context)
        word_weights = weights.new_zeros(batch * n_sent, n_words).index_copy(0, real, weights)
        out = self.read_sentences(sentences.view(batch, n_sent, -1), sentence_mask)
        out.word_weights = word_weights.view(batch, n_sent, n_words)
        if parts and out.parts is not None:
            states = encoded.new_zeros(word_mask.shape + (hidden,))  # (B, N, W, 2Dw)
            out.parts.word_states = states.masked_scatter(word_mask.unsqueeze(-1), encoded.detach())
        else:
            out.parts = None
        return out

    def forward_padded(
        self, words: Tensor, word_mask: Tensor, encoders: tuple[Encoder, Encoder] | None = None
    ) -> HANOutput:
        """``forward`` over padded rows: every sentence slot, empty ones too, runs through the word
        encoder as one (B*N, W) row with its length, where ``forward`` packs the real words. This is the
        form an exported graph traces (ONNX has no packed sequences): ``encoders`` (words, sentences),
        each ``(x (R, L, E), lengths (R,), 0 for an empty row) -> (R, L, 2D)``, are then
        ``models.padded_rnn.PaddedBiRNN``s; by default the model's own BiGRUs. Same values as ``forward``
        in eval mode. Shapes: words (B, N, W), word_mask (B, N, W) -> HANOutput without ``parts``."""
        encode_words, encode_sentences = encoders or (self._own_words, self._own_sentences)
        batch, n_sent, n_words = words.shape
        flat, flat_mask = words.reshape(-1, n_words), word_mask.reshape(-1, n_words)
        encoded = encode_words(self.dropout(self.embedding(flat)), flat_mask.sum(1))  # (B*N, W, 2Dw)
        pooled = self.word_attention(encoded, flat_mask)
        assert pooled.weights is not None
        sentence_mask = flat_mask.any(1).view(batch, n_sent)  # (B, N)
        sentences = pooled.context.view(batch, n_sent, -1) * sentence_mask.unsqueeze(-1)
        out = self.read_sentences(sentences, sentence_mask, encode_sentences)
        out.word_weights, out.parts = (pooled.weights * flat_mask).view(batch, n_sent, n_words), None
        return out

    def _own_words(self, x: Tensor, lengths: Tensor) -> Tensor:
        return self.word_encoder(x, lengths.clamp_min(1))  # an empty row's states are never attended

    def _own_sentences(self, x: Tensor, lengths: Tensor) -> Tensor:
        return self.sentence_encoder(x, lengths)

    def read_sentences(
        self, sentences: Tensor, sentence_mask: Tensor, encoder: Encoder | None = None
    ) -> HANOutput:
        """Steps 3-5 from the sentence vectors (B, N, 2Dw) and sentence_mask (B, N) bool: the
        HANOutput with empty word weights and its ``parts`` (word_states left empty). ``encoder``: as
        ``forward_padded``'s, by default the sentence BiGRU."""
        encode = encoder or self._own_sentences
        states = encode(self.dropout(sentences), sentence_mask.sum(1).clamp_min(1))
        document = self.sentence_attention(states, sentence_mask)
        assert document.weights is not None
        logits = self.classifier(self.dropout(document.context))  # (B, C)
        empty = sentences.new_zeros(0)
        parts = HANParts(empty, sentences, states, document.context)
        return HANOutput(logits, empty, document.weights, parts)


class HANEnsemble(nn.Module):
    """Several HANs trained apart (other seeds, class weightings, sizes), read as one classifier.

    Class probabilities are the mean of the members' (``logits`` holds their log, so argmax and
    softmax work as for one HAN); word and sentence weights are the mean of the members' attention,
    still a distribution over the real words / sentences and exactly 0 on padding.
    Shapes: as ``HAN``: words (B, N, W), word_mask (B, N, W) -> HANOutput.
    """

    def __init__(self, members: Sequence[nn.Module]) -> None:
        super().__init__()
        if len(members) < 2:
            raise ValueError(f"an ensemble needs at least 2 members, got {len(members)}")
        self.members = nn.ModuleList(members)

    def forward(self, words: Tensor, word_mask: Tensor) -> HANOutput:
        probs, word_weights, sentence_weights = self.average(
            [member(words, word_mask) for member in self.members]
        )
        return HANOutput(probs.clamp_min(1e-12).log(), word_weights, sentence_weights)

    @staticmethod
    def average(outputs: Sequence[HANOutput]) -> tuple[Tensor, Tensor, Tensor]:
        """The members' outputs -> mean class probabilities (B, C), word weights (B, N, W) and sentence
        weights (B, N) (one output: its own softmax and weights)."""
        probs = torch.stack([o.logits.softmax(-1) for o in outputs]).mean(0)
        words = torch.stack([o.word_weights for o in outputs]).mean(0)
        return probs, words, torch.stack([o.sentence_weights for o in outputs]).mean(0)
