"""Batched beam search that also returns the chosen hypothesis's cross-attention.

Each step scores K x V_out continuations per sentence and keeps the best 2K: EOS candidates ranked
inside the top K become finished hypotheses (scored with the GNMT length penalty), the best K others
stay alive. A sentence is done once its best candidate is an EOS (as in JoeyNMT and OpenNMT-py) and it
has ``n_best`` finished hypotheses, or once it has K of them; done sentences leave the batch. At its
length limit only EOS is allowed, so every sentence finishes. Beam size 1 reproduces greedy search.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from ..data.tokenizer import BOS
from .common import Hypothesis, force_eos, length_penalty, max_lengths, output_vocabulary


@dataclass
class _Beams:
    """Alive beams of the b sentences still decoding, flattened to b * K rows.

    Shapes: tokens (bK, t) token ids starting with BOS; scores (bK,); attention (bK, t, S); items (b,)."""

    tokens: Tensor
    scores: Tensor
    attention: Tensor
    items: Tensor

    def select(
        self, rows: Tensor, new_tokens: Tensor, scores: Tensor, attention: Tensor, items: Tensor
    ) -> _Beams:
        return _Beams(
            torch.cat([self.tokens[rows], new_tokens.unsqueeze(1)], 1), scores, attention[rows], items
        )


@torch.no_grad()
def beam_search(
    model: Any,
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
    ids, eos = output_vocabulary(model)
    limits = max_lengths(src_mask, max_ratio, max_extra)  # (B,)
    src_lens = src_mask.sum(1).tolist()
    finished: list[list[Hypothesis]] = [[] for _ in range(batch)]
    state = model.encode(src, src_mask).expand(k)
    on = src.device  # everything is allocated where the source is (CPU or GPU)
    first = torch.full((batch, k), float("-inf"), device=on)
    first[:, 0] = 0.0
    beams = _Beams(
        torch.full((batch * k, 1), BOS, dtype=torch.long, device=on),
        first.view(-1),
        torch.zeros(batch * k, 0, src.shape[1], device=on),
        torch.arange(batch, device=on),
    )
    for t in range(int(limits.max()) + 1):
        b = beams.items.numel()
        log_probs, state, attn = model.step(beams.tokens[:, -1:], state)  # (bK, V_out)
        log_probs = force_eos(log_probs, eos, (limits[beams.items] <= t).repeat_interleave(k))
        vocab = log_probs.shape[1]
        top_scores, top_ids = (beams.scores.unsqueeze(1) + log_probs).view(b, k * vocab).topk(2 * k, dim=1)
        top_beam, top_token = top_ids // vocab, top_ids % vocab  # (b, 2K)
        history = torch.cat([beams.attention, attn.to(beams.attention.dtype)], 1)  # (bK, t+1, S)
        is_eos = top_token == eos
        for item, rank in (is_eos[:, :k] & torch.isfinite(top_scores[:, :k])).nonzero().tolist():
            row, sentence = item * k + int(top_beam[item, rank]), int(beams.items[item])
            normed = float(top_scores[item, rank]) / length_penalty(t + 1, alpha)
            attention = history[row, :, : int(src_lens[sentence])].float().cpu()
            finished[sentence].append(Hypothesis(beams.tokens[row, 1:].tolist(), normed, attention))
        count = torch.tensor([len(finished[int(i)]) for i in beams.items.tolist()], device=on)
        done = (count >= k) | (is_eos[:, 0] & (count >= n_best))  # (b,)
        if bool(done.all()):
            break
        # Keep the best K non-EOS candidates of the sentences still going (stable sort puts them first).
        order = torch.sort(is_eos.int(), dim=1, stable=True).indices[:, :k]  # (b, K)
        going = (~done).nonzero().squeeze(1)
        rows = (going.unsqueeze(1) * k + top_beam.gather(1, order)[going]).view(-1)  # (b'K,)
        new_tokens = ids[top_token.gather(1, order)[going]].view(-1)
        state = state.reorder(rows)
        beams = beams.select(
            rows, new_tokens, top_scores.gather(1, order)[going].view(-1), history, beams.items[going]
        )
    return [sorted(f, key=lambda h: -h.score)[:n_best] for f in finished]
