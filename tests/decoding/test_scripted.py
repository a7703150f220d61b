"""Greedy and beam search on a scripted step model whose probabilities are written out by hand, so the
right answer is known: beam beats greedy, the length penalty flips the winner, n-best is in score order."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
import torch
from torch import Tensor

from attnkit.data.tokenizer import BOS, EOS
from attnkit.decoding import beam_search, greedy_search

A, B, X = 10, 11, 12
IDS = [EOS, A, B, X]  # the output vocabulary: log-probabilities range over these positions


@dataclass
class _State:
    prefix: Tensor  # (b, t) token ids decoded so far, BOS first

    def reorder(self, index: Tensor) -> _State:
        return _State(self.prefix.index_select(0, index))

    def expand(self, beam: int) -> _State:
        return _State(self.prefix.repeat_interleave(beam, 0))


class _Output:
    target_ids = torch.tensor(IDS)


class Scripted:
    """Next-token probabilities keyed by the prefix (without BOS); unlisted prefixes end with EOS."""

    output = _Output()

    def __init__(self, table: dict[tuple[int, ...], dict[int, float]]) -> None:
        self.table = table

    def encode(self, src: Tensor, src_mask: Tensor) -> _State:
        return _State(torch.zeros(src.shape[0], 0, dtype=torch.long))

    def step(self, prev: Tensor, state: _State) -> tuple[Tensor, _State, Tensor]:
        """prev (b, 1): last token (BOS first) -> log-probs (b, 4), longer prefix, attention (b, 1, 2)."""
        prefix = torch.cat([state.prefix, prev], 1)
        assert prefix[:, 0].eq(BOS).all()
        rows = []
        for row in prefix.tolist():
            probs = self.table.get(tuple(row[1:]), {EOS: 1.0})
            rows.append([math.log(probs.get(t, 1e-9)) for t in IDS])
        return torch.tensor(rows), _State(prefix), torch.full((prefix.shape[0], 1, 2), 0.5)


def _src(n: int = 1) -> tuple[Tensor, Tensor]:
    src = torch.full((n, 2), 5, dtype=torch.long)
    return src, torch.ones(n, 2, dtype=torch.bool)


# Greedy takes A (0.6) and then can only end in 0.3 (0.18); B (0.4) then EOS (0.9) is better (0.36).
TRAP = {(): {A: 0.6, B: 0.4}, (A,): {X: 0.35, EOS: 0.3, B: 0.35}, (A, X): {EOS: 0.5}, (A, B): {EOS: 0.5}}
TRAP[(B,)] = {EOS: 0.9}


def test_greedy_falls_into_the_trap_and_beam_does_not():
    model = Scripted(TRAP)
    [greedy] = greedy_search(model, *_src())
    [[beam]] = beam_search(model, *_src(), beam_size=3, alpha=0.0)
    assert greedy.tokens[0] == A
    assert beam.tokens == [B]
    assert beam.score == pytest.approx(math.log(0.4 * 0.9), abs=1e-6)
    assert beam.score > greedy.score


def test_length_penalty_flips_the_winner():
    # ending at once: 0.48 (length 1); X then EOS: 0.52 * 0.9 = 0.468 (length 2)
    model = Scripted({(): {EOS: 0.48, X: 0.52}, (X,): {EOS: 0.9}})
    [[raw]] = beam_search(model, *_src(), beam_size=2, alpha=0.0)
    [[normed]] = beam_search(model, *_src(), beam_size=2, alpha=2.0)
    assert raw.tokens == [] and raw.score == pytest.approx(math.log(0.48), abs=1e-6)
    assert normed.tokens == [X]
    assert normed.score == pytest.approx(math.log(0.468) / (7 / 6) ** 2, abs=1e-6)


def test_n_best_lists_every_finished_hypothesis_in_score_order():
    model = Scripted({(): {A: 0.5, B: 0.3, X: 0.2}, (A,): {EOS: 1.0}, (B,): {EOS: 1.0}, (X,): {EOS: 1.0}})
    [nbest] = beam_search(model, *_src(), beam_size=3, alpha=0.0, n_best=3)
    assert [h.tokens for h in nbest] == [[A], [B], [X]]
    assert [h.score for h in nbest] == pytest.approx([math.log(p) for p in (0.5, 0.3, 0.2)], abs=1e-6)
    with pytest.raises(ValueError, match="n_best must be in 1..beam_size"):
        beam_search(model, *_src(), beam_size=2, n_best=3)
