"""Issue 43: head roles from measured patterns. The induction rule is validated on a model with known
induction heads (Olsson et al. 2022's setting, ``tests.hf.induction``): it names them after training and
none in the untrained copy; the other rules on patterns built to fit each."""

from __future__ import annotations

import numpy as np
import pytest

from attnkit.explain.roles import head_roles, induction_scores, uniform_entropy
from attnkit.hf.causal import HFCausalLM
from attnkit.inspecting import inspect
from tests.hf import induction


def test_each_rule_names_the_pattern_built_for_it():
    length = 100
    broad = uniform_entropy(length)
    #            induction   previous  sink  local  broad        mixed
    entropy = np.array([[1.0, 0.5, 1.0, 1.5, broad * 0.9, broad * 0.3]])
    distance = np.array([[30.0, 1.0, 50.0, 2.5, 40.0, 30.0]])
    sink = np.array([[0.1, 0.0, 0.8, 0.1, 0.05, 0.2]])
    previous = np.array([[0.1, 0.9, 0.0, 0.3, 0.02, 0.1]])
    scores = np.array([[0.9, 0.0, 0.0, 0.0, 0.0, 0.1]])
    roles = head_roles(entropy, distance, sink, previous, length, scores)
    assert roles == [["induction", "previous-token", "sink", "local", "broad", "mixed"]]
    assert head_roles(entropy, distance, sink, previous, length)[0][0] == "mixed"  # no probe: no induction


def test_the_induction_score_reads_the_token_after_the_earlier_occurrence():
    period, offset = 5, 1
    t = offset + 2 * period
    rows = np.zeros((1, t, t))
    for p in range(t):
        target = p - period + 1 if p > offset + period else p
        rows[0, p, target] = 1.0
    assert induction_scores(rows, period, offset)[0] == pytest.approx(1.0)
    assert (
        induction_scores(np.tril(np.ones((1, t, t))) / np.arange(1, t + 1)[:, None], period, offset)[0] < 0.15
    )


@pytest.mark.slow
def test_the_detector_finds_trained_induction_heads_and_none_untrained():
    tok = induction.tokenizer()
    trained, untrained = induction.model(), induction.model()
    history = induction.train(trained, steps=1000)
    first, second = induction.repeat_losses(trained)
    assert second < 0.3 < 3.0 < first, history  # the repeat is predicted in context, the first half not
    text = " ".join(f"t{i}" for i in np.random.default_rng(1).integers(0, induction.VOCAB, 40))
    found = inspect(HFCausalLM(trained, tok, "attention-only"), text)
    heads = [(i, h) for i, row in enumerate(found.roles) for h, role in enumerate(row) if role == "induction"]
    assert heads and all(i == 1 for i, _ in heads)  # induction needs a layer below it (K-composition)
    assert min(found.induction[i, h] for i, h in heads) >= 0.4
    assert any(role == "previous-token" for role in found.roles[0])  # the head that feeds it
    baseline = inspect(HFCausalLM(untrained, tok, "untrained"), text)
    assert baseline.induction.max() < 0.1 and not any("induction" in row for row in baseline.roles)
