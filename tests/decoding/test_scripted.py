"""Greedy and beam search on a scripted step model whose probabilities are written out by hand, so the
right answer is known: beam beats greedy, the length penalty flips the winner, n-best is in score order.

Every test runs twice: through ``attnkit.decoding`` on a torch model (what the torch backend does) and
through ``attnkit.search`` on a NumPy stepper (what the ONNX runtime does), with the same table."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest
import torch
from torch import Tensor

from attnkit import search
from attnkit.decoding import beam_search, greedy_search
from attnkit.vocab import BOS, EOS

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
        rows = _log_probs(self.table, prefix.tolist())
        return torch.tensor(rows), _State(prefix), torch.full((prefix.shape[0], 1, 2), 0.5)


def _log_probs(table: dict[tuple[int, ...], dict[int, float]], prefix: list[list[int]]) -> list[list[float]]:
    rows = []
    for row in prefix:
        probs = table.get(tuple(row[1:]), {EOS: 1.0})
        rows.append([math.log(probs.get(t, 1e-9)) for t in IDS])
    return rows


@dataclass
class _NumpyState:
    prefix: np.ndarray  # (b, t)

    def reorder(self, index: np.ndarray) -> _NumpyState:
        return _NumpyState(self.prefix[index])

    def expand(self, beam: int) -> _NumpyState:
        return _NumpyState(np.repeat(self.prefix, beam, 0))


class NumpyScripted:
    """The same script as a ``attnkit.search.Stepper`` (NumPy in, NumPy out), as the ONNX runtime is."""

    target_ids = np.array(IDS)

    def __init__(self, table: dict[tuple[int, ...], dict[int, float]]) -> None:
        self.table = table

    def encode(self, src: np.ndarray, src_mask: np.ndarray) -> _NumpyState:
        return _NumpyState(np.zeros((src.shape[0], 0), dtype=np.int64))

    def step(self, prev: np.ndarray, state: _NumpyState, k: int):  # type: ignore[no-untyped-def]
        prefix = np.concatenate([state.prefix, prev], 1)
        assert (prefix[:, 0] == BOS).all()
        log_probs = np.array(_log_probs(self.table, prefix.tolist()), dtype=np.float32)
        values, ids = search.top_candidates(log_probs, k)
        return values, ids, _NumpyState(prefix), np.full((prefix.shape[0], 1, 2), 0.5, dtype=np.float32)


def _src(n: int = 1) -> tuple[Tensor, Tensor]:
    src = torch.full((n, 2), 5, dtype=torch.long)
    return src, torch.ones(n, 2, dtype=torch.bool)


class _Searches:
    """greedy/beam with one signature for both backends; hypotheses' attention as NumPy."""

    def __init__(self, backend: str) -> None:
        self.backend = backend

    def greedy(self, table):  # type: ignore[no-untyped-def]
        if self.backend == "torch":
            return greedy_search(Scripted(table), *_src())
        src, mask = (x.numpy() for x in _src())
        return search.greedy(NumpyScripted(table), src, mask)

    def beam(self, table, **kw):  # type: ignore[no-untyped-def]
        if self.backend == "torch":
            return beam_search(Scripted(table), *_src(), **kw)
        src, mask = (x.numpy() for x in _src())
        return search.beam(NumpyScripted(table), src, mask, **kw)


@pytest.fixture(params=["torch", "numpy"])
def run(request: pytest.FixtureRequest) -> _Searches:
    return _Searches(request.param)


# Greedy takes A (0.6) and then can only end in 0.3 (0.18); B (0.4) then EOS (0.9) is better (0.36).
TRAP = {(): {A: 0.6, B: 0.4}, (A,): {X: 0.35, EOS: 0.3, B: 0.35}, (A, X): {EOS: 0.5}, (A, B): {EOS: 0.5}}
TRAP[(B,)] = {EOS: 0.9}


def test_greedy_falls_into_the_trap_and_beam_does_not(run):
    [greedy] = run.greedy(TRAP)
    [[beam]] = run.beam(TRAP, beam_size=3, alpha=0.0)
    assert greedy.tokens[0] == A
    assert beam.tokens == [B]
    assert beam.score == pytest.approx(math.log(0.4 * 0.9), abs=1e-6)
    assert beam.score > greedy.score
    assert tuple(beam.attention.shape) == (2, 2)


def test_length_penalty_flips_the_winner(run):
    # ending at once: 0.48 (length 1); X then EOS: 0.52 * 0.9 = 0.468 (length 2)
    table = {(): {EOS: 0.48, X: 0.52}, (X,): {EOS: 0.9}}
    [[raw]] = run.beam(table, beam_size=2, alpha=0.0)
    [[normed]] = run.beam(table, beam_size=2, alpha=2.0)
    assert raw.tokens == [] and raw.score == pytest.approx(math.log(0.48), abs=1e-6)
    assert normed.tokens == [X]
    assert normed.score == pytest.approx(math.log(0.468) / (7 / 6) ** 2, abs=1e-6)


def test_n_best_lists_every_finished_hypothesis_in_score_order(run):
    table = {(): {A: 0.5, B: 0.3, X: 0.2}, (A,): {EOS: 1.0}, (B,): {EOS: 1.0}, (X,): {EOS: 1.0}}
    [nbest] = run.beam(table, beam_size=3, alpha=0.0, n_best=3)
    assert [h.tokens for h in nbest] == [[A], [B], [X]]
    assert [h.score for h in nbest] == pytest.approx([math.log(p) for p in (0.5, 0.3, 0.2)], abs=1e-6)
    with pytest.raises(ValueError, match="n_best must be in 1..beam_size"):
        run.beam(table, beam_size=2, n_best=3)


@pytest.mark.parametrize("table", [TRAP, {(): {A: 0.5, B: 0.3, X: 0.2}, (A,): {X: 0.7, EOS: 0.3}}])
@pytest.mark.parametrize("beam", [1, 2, 3])
def test_both_backends_give_identical_hypotheses(table, beam):
    torch_side, numpy_side = _Searches("torch"), _Searches("numpy")
    for a, b in zip(
        torch_side.beam(table, beam_size=beam, n_best=beam),
        numpy_side.beam(table, beam_size=beam, n_best=beam),
    ):
        assert [(h.tokens, h.score) for h in a] == [(h.tokens, h.score) for h in b]
        for ha, hb in zip(a, b):
            np.testing.assert_array_equal(ha.attention, hb.attention)
