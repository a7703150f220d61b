"""Head roles of a decoder-only model, from each head's measured pattern (``hf.capture`` aggregates).

Rules, tried in this order (the first that holds names the head); each threshold is a share of a row's
attention averaged over the rows measured:

- ``induction``: on the induction probe (a random token sequence, then the same sequence again), the
  weight a second-repeat token puts on the token right after its earlier occurrence is >= 0.4 (Olsson et
  al. 2022's prefix-matching score; a uniform head scores about 1/position);
- ``previous-token``: weight on key i - 1 >= 0.5;
- ``sink``: weight on the first 4 tokens (rows past them) >= 0.5 (Xiao et al. 2023's attention sinks);
- ``local``: mean attention distance <= 4 tokens (a positional head looking at its neighbourhood);
- ``broad``: row entropy >= 0.6 of the uniform row's (log of the row's length), i.e. spread out;
- ``mixed``: none of these.
"""

from __future__ import annotations

import numpy as np

INDUCTION, PREVIOUS, SINK, LOCAL, BROAD = 0.4, 0.5, 0.5, 4.0, 0.6


def uniform_entropy(length: int) -> float:
    """Mean over rows i = 0..T-1 of log(i + 1): the entropy of uniform causal rows of a T-token text."""
    return float(np.mean(np.log(np.arange(1, length + 1)))) if length else 0.0


def head_roles(
    entropy: np.ndarray,
    distance: np.ndarray,
    sink: np.ndarray,
    previous: np.ndarray,
    length: int,
    induction: np.ndarray | None = None,
) -> list[list[str]]:
    """(L, H) aggregates -> (L, H) role names (``induction`` None: that rule is skipped)."""
    uniform = max(uniform_entropy(length), 1e-9)
    roles = []
    for layer in range(entropy.shape[0]):
        row = []
        for head in range(entropy.shape[1]):
            if induction is not None and induction[layer, head] >= INDUCTION:
                row.append("induction")
            elif previous[layer, head] >= PREVIOUS:
                row.append("previous-token")
            elif sink[layer, head] >= SINK:
                row.append("sink")
            elif distance[layer, head] <= LOCAL:
                row.append("local")
            elif entropy[layer, head] / uniform >= BROAD:
                row.append("broad")
            else:
                row.append("mixed")
        roles.append(row)
    return roles


def induction_scores(rows: np.ndarray, period: int, offset: int) -> np.ndarray:
    """rows (..., T, T): full attention over the probe ``offset`` tokens (e.g. <s>), a sequence of
    ``period`` tokens, the same again. Per head: mean weight of second-repeat queries p on p - period + 1."""
    queries = np.arange(offset + period + 1, offset + 2 * period)
    return rows[..., queries, queries - period + 1].mean(-1)
