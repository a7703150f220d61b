"""HAN speed on real review batches: attnkit's HAN vs the same model run the usual way, in one process.

The peer is what HAN implementations (and attnkit before 0.10) do: ``nn.GRU`` on a ``PackedSequence``
for both encoders and attention pooling over the padded (sentences, words) tensor. Same weights, same
batches (``configs/reviews-han.yaml``, 64 documents each); training = forward + backward + AdamW step.

    python benchmarks/han_speed.py [--threads 2] [--batches 20]
"""

from __future__ import annotations

import argparse
import copy
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from attnkit.config import load_config
from attnkit.models.han import HAN
from attnkit.training.classification import ClassificationTask


def packed_gru(rnn: nn.GRU, x: Tensor, lengths: Tensor) -> Tensor:
    """x (B, L, E), lengths (B,) -> (B, L, 2H) through a PackedSequence."""
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    return pad_packed_sequence(rnn(packed)[0], batch_first=True, total_length=x.shape[1])[0]


def peer_logits(model: HAN, words: Tensor, word_mask: Tensor) -> Tensor:
    """The usual HAN forward with attnkit's weights: words (B, N, W) -> logits (B, C)."""
    batch, n_sent, n_words = words.shape
    sentence_mask = word_mask.any(-1)
    flat_mask = word_mask.view(-1, n_words)
    real = sentence_mask.view(-1).nonzero().squeeze(1)
    embedded = model.dropout(model.embedding(words.view(-1, n_words).index_select(0, real)))
    encoded = packed_gru(model.word_encoder.rnn, embedded, flat_mask.index_select(0, real).sum(1))
    pooled = model.word_attention(encoded, flat_mask.index_select(0, real)).context
    sentences = pooled.new_zeros(batch * n_sent, pooled.shape[-1]).index_copy(0, real, pooled)
    states = packed_gru(
        model.sentence_encoder.rnn,
        model.dropout(sentences.view(batch, n_sent, -1)),
        sentence_mask.sum(1).clamp_min(1),
    )
    document = model.sentence_attention(states, sentence_mask).context
    return model.classifier(model.dropout(document))


def step_times(forward, model: nn.Module, batches: list, train: bool) -> list[float]:
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train(train)
    times = []
    for batch in [batches[0], *batches]:  # the first is a warm-up
        start = time.perf_counter()
        with torch.set_grad_enabled(train):
            logits = forward(model, batch.words, batch.word_mask)
            if train:
                F.cross_entropy(logits, batch.labels).backward()
                optimizer.step()
                optimizer.zero_grad()
        times.append(time.perf_counter() - start)
    return times[1:]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batches", type=int, default=20)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    task = ClassificationTask(load_config("configs/reviews-han.yaml"))
    batches = [b for _, b in zip(range(args.batches), task.batches(0, 0, 0, 1))]
    words = sum(int(b.word_mask.sum()) for b in batches)
    torch.manual_seed(0)
    ours = HAN(task.vocab_size, task.num_classes).eval()
    peer = copy.deepcopy(ours)
    first = batches[0]
    with torch.no_grad():
        ours_logits = ours(first.words, first.word_mask).logits
        diff = (ours_logits - peer_logits(peer, first.words, first.word_mask)).abs().max()
    print(
        f"torch {torch.__version__}, {args.threads} threads, "
        f"{len(batches)} batches of 64 reviews ({words:,} words)"
    )
    print(f"same weights, max |logit difference| = {float(diff):.1e}")
    print(f"{'':10s} {'attnkit words/s':>16s} {'packed words/s':>15s} {'speed-up':>9s}")
    for name, train in (("training", True), ("inference", False)):
        t_ours = step_times(lambda m, w, k: m(w, k).logits, ours, batches, train)
        t_peer = step_times(peer_logits, peer, batches, train)
        ours_wps, peer_wps = words / sum(t_ours), words / sum(t_peer)
        print(
            f"{name:10s} {ours_wps:16,.0f} {peer_wps:15,.0f} {ours_wps / peer_wps:8.2f}x"
            f"   (median batch {1e3 * np.median(t_ours):.0f} vs {1e3 * np.median(t_peer):.0f} ms)"
        )


if __name__ == "__main__":
    main()
