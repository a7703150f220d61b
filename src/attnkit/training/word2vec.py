"""Skip-gram word vectors with negative sampling (Mikolov et al., 2013), trained on the task's own text.

Yang et al. (2016, sec. 3.3) initialise the HAN's word embeddings with word2vec trained on the
training (and validation) documents. This is that step, in PyTorch, over the training documents
only: frequent-word subsampling (keep ``sqrt(t / f) + t / f``), a dynamic window of 1..``window``
words on each side within a sentence, ``negatives`` noise words per pair drawn from the unigram
distribution to the power 0.75, and SparseAdam on sparse embeddings. Ids 0 (<pad>) and 1 (<unk>) are
never trained on and keep their rows.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..errors import ConfigError, DataError


@dataclass
class Word2VecStats:
    epochs: int
    pairs: int  # (center, context) pairs trained on, all epochs
    seconds: float
    final_loss: float  # mean negative-sampling loss of the last epoch


def _pairs(tokens: Tensor, sentence: Tensor, window: int, gen: torch.Generator) -> tuple[Tensor, Tensor]:
    """Shapes: tokens (L,), sentence (L,) ids of the sentence each token is in -> centers (P,), contexts (P,).

    Each center draws its window b in 1..window; it predicts the words at distance <= b on both sides
    that are in its sentence."""
    reach = torch.randint(1, window + 1, tokens.shape, generator=gen)  # (L,)
    centers, contexts = [], []
    for d in range(1, window + 1):
        same = sentence[d:] == sentence[:-d]  # (L-d,) token i and i+d in one sentence
        right = same & (reach[:-d] >= d)  # center i predicts i+d
        left = same & (reach[d:] >= d)  # center i+d predicts i
        centers += [tokens[:-d][right], tokens[d:][left]]
        contexts += [tokens[d:][right], tokens[:-d][left]]
    return torch.cat(centers), torch.cat(contexts)


def train_word2vec(
    sentences: Sequence[Sequence[int]],
    vocab_size: int,
    dim: int,
    epochs: int = 5,
    window: int = 5,
    negatives: int = 5,
    subsample: float = 1e-3,
    lr: float = 0.01,
    batch_size: int = 4096,
    seed: int = 1,
    log: Callable[[str], None] | None = None,
) -> tuple[Tensor, Word2VecStats]:
    """Word vectors for ids 0..vocab_size-1 learned from ``sentences`` (lists of ids).

    ``batch_size`` is the largest batch of pairs; smaller text gets smaller batches.
    Returns the input embeddings (V, dim) (rows of words never seen, and of ids 0 and 1, keep their
    small random init) and what was trained."""
    if epochs < 1 or window < 1 or negatives < 1 or dim < 1:
        raise ConfigError(
            f"word2vec needs epochs, window, negatives, dim >= 1; got {epochs}, {window}, {negatives}, {dim}"
        )
    started = time.time()
    gen = torch.Generator().manual_seed(seed)
    flat = torch.tensor([w for s in sentences for w in s], dtype=torch.long)  # (L,)
    which = torch.repeat_interleave(torch.arange(len(sentences)), torch.tensor([len(s) for s in sentences]))
    trainable = flat > 1
    flat, which = flat[trainable], which[trainable]
    if flat.numel() < 2:
        raise DataError("word2vec needs at least two known words in the training text")
    counts = torch.bincount(flat, minlength=vocab_size).double()  # (V,)
    freq = counts / counts.sum()
    keep = ((subsample / freq).sqrt() + subsample / freq).clamp(max=1.0).nan_to_num(0.0).float()  # (V,)
    noise = counts.pow(0.75).float()  # (V,) unnormalised noise distribution

    emb_in = nn.Embedding(vocab_size, dim, sparse=True)
    emb_out = nn.Embedding(vocab_size, dim, sparse=True)
    with torch.no_grad():
        emb_in.weight.uniform_(-0.5 / dim, 0.5 / dim, generator=gen)
        emb_out.weight.zero_()
    optimizer = torch.optim.SparseAdam([emb_in.weight, emb_out.weight], lr=lr)
    total_pairs, loss_sum, n_batches = 0, 0.0, 0
    for epoch in range(epochs):
        kept = torch.rand(flat.shape, generator=gen) < keep[flat]  # (L,)
        centers, contexts = _pairs(flat[kept], which[kept], window, gen)
        order = torch.randperm(centers.numel(), generator=gen)
        batch = max(64, min(batch_size, centers.numel() // 200))  # >= ~200 updates an epoch on small text
        loss_sum, n_batches = 0.0, 0
        for start in range(0, order.numel(), batch):
            idx = order[start : start + batch]
            noise_ids = torch.multinomial(noise, idx.numel() * negatives, True, generator=gen)
            loss = _sgns_loss(emb_in, emb_out, centers[idx], contexts[idx], noise_ids.view(-1, negatives))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_sum, n_batches = loss_sum + loss.item(), n_batches + 1
        total_pairs += centers.numel()
        if log:
            log(
                f"word2vec epoch {epoch + 1}/{epochs}: {centers.numel():,} pairs, "
                f"loss {loss_sum / n_batches:.4f}"
            )
    stats = Word2VecStats(
        epochs, total_pairs, round(time.time() - started, 2), round(loss_sum / n_batches, 4)
    )
    return emb_in.weight.detach().clone(), stats


def _sgns_loss(
    emb_in: nn.Embedding, emb_out: nn.Embedding, centers: Tensor, contexts: Tensor, noise: Tensor
) -> Tensor:
    """Shapes: centers (P,), contexts (P,), noise (P, K) -> mean over P of
    -log sigmoid(u_o . v_c) - sum_k log sigmoid(-u_k . v_c)."""
    v = emb_in(centers)  # (P, E)
    positive = (emb_out(contexts) * v).sum(-1)  # (P,)
    negative = torch.bmm(emb_out(noise), v.unsqueeze(-1)).squeeze(-1)  # (P, K)
    return -(F.logsigmoid(positive) + F.logsigmoid(-negative).sum(-1)).mean()
