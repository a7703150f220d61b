"""Maps derived from a decoder-only model's attention, for chosen query rows (``attnkit.inspect(maps=...)``).

- ``rollout`` (Abnar and Zuidema 2020): row i of ``M_{L-1} ... M_0``, ``M_l = 0.5 mean_h A_l + 0.5 I`` (the
  convention of ``explain.attention_maps.residual_mix``), propagated top-down as R row vectors times each
  layer's head-mean attention, that attention made chunk by chunk from the layer's kept queries and keys:
  O(R T) beyond the kept q/k, at any length the model reads.
- ``grad`` (Chefer et al. 2021, the self-attention rule): ``R = I; R += mean_h (dA * A)^+ R`` per layer, dA
  the gradient of the logit of the token at i + 1 (the model's own prediction at the last position) with
  respect to each layer's attention; row i of R as a distribution. It needs eager attention with gradients,
  O(L H T^2) memory, so it is refused past ``GRAD_TOKENS`` tokens with the numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import UsageError

MAPS = ("rollout", "grad")
GRAD_TOKENS = 1024
GRAD_ROWS = 64


def rollout_rows(qk: list[Any], rows: list[int], length: int) -> np.ndarray:
    """qk: per layer (queries, keys, scoring) as ``capture.Recorder.qk`` keeps them."""
    import torch

    from .capture import mean_rows_product

    vectors = torch.zeros(len(rows), length, dtype=torch.float64)
    vectors[torch.arange(len(rows)), torch.tensor(rows)] = 1.0
    for query, key, how in reversed(qk):
        mixed = mean_rows_product(vectors, query, key, how)
        vectors = 0.5 * mixed + 0.5 * vectors
    return vectors.numpy().astype(np.float32)


def grad_rows(lm: Any, ids: list[int], rows: list[int]) -> np.ndarray:
    """Chefer et al.'s relevance rows for ``rows`` (see the module docstring); (R, T)."""
    import torch

    from ..explain.attention_maps import distribution, gradient_weighted

    if len(ids) > GRAD_TOKENS or len(rows) > GRAD_ROWS:
        raise UsageError(
            f"the grad map needs eager attention with gradients (L x H x T^2 floats): at most {GRAD_TOKENS} "
            f"tokens and {GRAD_ROWS} rows, got {len(ids)} tokens and {len(rows)} rows (rollout has no limit)"
        )
    model = lm.model
    before = model.config._attn_implementation
    model.set_attn_implementation("eager")
    try:
        tensor = torch.tensor([ids], device=lm.device)
        out = model(input_ids=tensor, output_attentions=True)
        attentions = list(out.attentions)  # L x (1, H, T, T), in the graph
        found = []
        for row in rows:
            target = ids[row + 1] if row + 1 < len(ids) else int(out.logits[0, row].argmax())
            grads = torch.autograd.grad(out.logits[0, row, target], attentions, retain_graph=True)
            relevance = np.eye(len(ids))
            for weights, grad in zip(attentions, grads):
                bar = gradient_weighted(weights[0].detach().double().numpy(), grad[0].double().numpy())
                relevance = relevance + bar @ relevance
            found.append(distribution(relevance[row : row + 1])[0])
    finally:
        model.set_attn_implementation(before)
    return np.stack(found).astype(np.float32)
