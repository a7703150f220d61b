"""Batched beam search that also returns the chosen hypothesis's cross-attention.

Each step scores K * V continuations per sentence and keeps the best 2K: EOS candidates ranked
inside the top K become finished hypotheses (scored with the GNMT length penalty), the best K
others stay alive. A sentence is done when it has K finished hypotheses; at its length limit only
EOS is allowed, so every sentence finishes. Beam size 1 reproduces greedy search exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import Tensor

from ..data.tokenizer import BOS, EOS, PAD
from .common import Hypothesis, forbid, length_penalty, max_lengths, only


@dataclass
class _Beams:
    """Alive beams, flattened to B * K rows. Shapes: tokens (BK, t), scores (BK,), attention (BK, t, S)."""

    tokens: Tensor
    scores: Tensor
    attention: Tensor
    finished: list[list[Hypothesis]] = field(default_factory=list)


def _finish(
    beams: _Beams, item: int, token_row: Tensor, score: float, attn: Tensor, alpha: float, src_len: int
) -> None:
    length = token_row.shape[0] + 1  # EOS included
    normed = score / float(length_penalty(torch.tensor(length), alpha))
    tokens = token_row.tolist()
    beams.finished[item].append(Hypothesis(tokens, normed, attn[:, :src_len]))


@torch.no_grad()
def beam_search(  # type: ignore[no-untyped-def]
    model,
    src: Tensor,
    src_mask: Tensor,
    beam_size: int = 5,
    alpha: float = 1.0,
    n_best: int = 1,
    max_ratio: float = 1.5,
    max_extra: int = 10,
) -> list[list[Hypothesis]]:
    """Shapes: src (B, S), src_mask (B, S) -> per sentence, its ``n_best`` hypotheses, best first."""
    if not 1 <= n_best <= beam_size:
        raise ValueError(f"n_best must be in 1..beam_size ({beam_size}), got {n_best}")
    batch, k = src.shape[0], beam_size
    limits = max_lengths(src_mask, max_ratio, max_extra).repeat_interleave(k)  # (BK,)
    src_lens = src_mask.sum(1).tolist()
    state = model.encode(src, src_mask).expand(k)
    scores = torch.full((batch, k), float("-inf"))
    scores[:, 0] = 0.0
    beams = _Beams(
        torch.full((batch * k, 1), BOS, dtype=torch.long),
        scores.view(-1),
        src.new_zeros(batch * k, 0, src.shape[1], dtype=torch.float),
        [[] for _ in range(batch)],
    )
    done = torch.zeros(batch, dtype=torch.bool)
    offsets = (torch.arange(batch) * k).unsqueeze(1)  # (B, 1)
    for t in range(int(limits.max()) + 1):
        log_probs, state, attn = model.step(beams.tokens[:, -1:], state)
        log_probs = only(forbid(forbid(log_probs, PAD), BOS), EOS, limits <= t)
        vocab = log_probs.shape[1]
        cand = (beams.scores.unsqueeze(1) + log_probs).view(batch, k * vocab)  # (B, K*V)
        top_scores, top_ids = cand.topk(2 * k, dim=1)  # (B, 2K)
        top_beam, top_token = top_ids // vocab, top_ids % vocab
        history = torch.cat([beams.attention, attn], 1)  # (BK, t+1, S)
        is_eos = top_token == EOS
        for item, rank in (
            (is_eos[:, :k] & torch.isfinite(top_scores[:, :k]) & ~done.unsqueeze(1)).nonzero().tolist()
        ):
            row = int(offsets[item, 0] + top_beam[item, rank])
            _finish(
                beams,
                item,
                beams.tokens[row, 1:],
                float(top_scores[item, rank]),
                history[row],
                alpha,
                int(src_lens[item]),
            )
        done = done | torch.tensor([len(f) >= k for f in beams.finished])
        if bool(done.all()):
            break
        # Keep the best K non-EOS candidates (stable sort puts them first, in score order).
        order = torch.sort(is_eos.int(), dim=1, stable=True).indices[:, :k]  # (B, K)
        keep_beam = top_beam.gather(1, order)
        keep_scores = top_scores.gather(1, order).masked_fill(done.unsqueeze(1), float("-inf"))
        rows = (offsets + keep_beam).view(-1)  # (BK,)
        state = state.reorder(rows)
        beams.tokens = torch.cat([beams.tokens[rows], top_token.gather(1, order).view(-1, 1)], 1)
        beams.scores = keep_scores.view(-1)
        beams.attention = history[rows]
    return [sorted(f, key=lambda h: -h.score)[:n_best] for f in beams.finished]
