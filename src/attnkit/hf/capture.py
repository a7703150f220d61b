"""Attention of a decoder-only model at full length, captured on demand in bounded memory.

The model runs its own attention (SDPA, or eager where it was loaded so); an attention function
registered with transformers' ``AttentionInterface`` sees each layer's queries and keys as the model made
them (after rotary embeddings and any q/k norms, before grouped-query keys are repeated) and computes, in
chunks of query rows, exactly what eager attention would: ``softmax(scaling * q k^T`` (soft-capped where
the family caps) ``+ causal and sliding-window masks)`` in float32. Nothing of size (H, T, T) is kept:
per layer only the requested rows (R, T) per requested head and these aggregates, O(T + H):

- ``received`` (T,): the attention each key receives, averaged over heads and query rows (sums to 1);
- per head ``entropy`` (mean row entropy, nats), ``distance`` (mean of i - j under the row's weights),
  ``sink`` (mean weight on the first ``sink_tokens`` keys, over rows past them), ``previous`` (mean weight
  on key i - 1).

Every family whose attention goes through the interface is covered (GPT-2, Llama, Mistral, Qwen2/3,
Gemma/2/3, Phi/3, Falcon, ...); ALiBi models that compute attention their own way (Bloom, MPT) are refused
by ``check_family``. Shapes: query (B=1, H, T, d), key (1, KV, T, d); H is a multiple of KV.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from ..errors import UsageError

NAME = "attnkit_capture"
_ACTIVE: contextvars.ContextVar[Recorder | None] = contextvars.ContextVar("attnkit_capture", default=None)


@dataclass
class Plan:
    """What to keep beyond the aggregates: rows (query positions) of these heads in these layers."""

    layers: list[int] = field(default_factory=list)
    heads: list[int] = field(default_factory=list)
    rows: list[int] = field(default_factory=list)
    sink_tokens: int = 4
    chunk_floats: int = 1 << 23  # scores per chunk (H x rows x keys): 32 MB of float32
    aggregates: bool = True  # False: only the rows of ``layers`` (the other layers are not read at all)
    keep_qk: bool = False  # keep every layer's queries and keys (rollout reads them after the pass)


@dataclass
class LayerStats:
    """One layer's aggregates (see the module docstring) and its captured rows {head: (R, T)}."""

    received: np.ndarray
    entropy: np.ndarray
    distance: np.ndarray
    sink: np.ndarray
    previous: np.ndarray
    rows: dict[int, np.ndarray]


def _scores(q: torch.Tensor, k: torch.Tensor, scaling: float, softcap: float | None) -> torch.Tensor:
    """q (H, C, d), k (KV, K, d) -> (H, C, K) float32, grouped-query heads sharing their key head."""
    heads, rows, dim = q.shape
    groups = heads // k.shape[0]
    s = torch.matmul(q.reshape(k.shape[0], groups * rows, dim).float(), k.float().transpose(1, 2))
    s = s.view(heads, rows, -1) * scaling
    if softcap is not None:
        s = torch.tanh(s / softcap) * softcap
    return s


class _Sums:
    """Running sums of one layer's aggregates over its query chunks."""

    def __init__(self, heads: int, length: int, plan: Plan, keep: bool) -> None:
        self.received = torch.zeros(length, dtype=torch.float64)
        self.entropy, self.distance = (
            torch.zeros(heads, dtype=torch.float64),
            torch.zeros(heads, dtype=torch.float64),
        )
        self.sink, self.previous = (
            torch.zeros(heads, dtype=torch.float64),
            torch.zeros(heads, dtype=torch.float64),
        )
        self.plan, self.length = plan, length
        self.rows = {h: np.zeros((len(plan.rows), length), np.float32) for h in plan.heads} if keep else {}

    def add(self, w: torch.Tensor, s: torch.Tensor, lse: torch.Tensor, start: int, lo: int) -> None:
        """w, s (H, C, K): weights and scores of query rows start.. over keys lo..lo+K; lse (H, C)."""
        chunk, width = w.shape[1], w.shape[2]
        self.received[lo : lo + width] += w.sum((0, 1)).double()
        finite = torch.where(w > 0, s, torch.zeros((), dtype=s.dtype))
        self.entropy += (lse - (w * finite).sum(-1)).sum(-1).double()
        positions = torch.arange(lo, lo + width, dtype=torch.float32)
        queries = torch.arange(start, start + chunk, dtype=torch.float64)
        self.distance += queries.sum() - (w @ positions).sum(-1).double()
        past = max(self.plan.sink_tokens - start, 0)  # rows past the sink tokens only
        if past < chunk and lo == 0:
            self.sink += w[:, past:, : self.plan.sink_tokens].sum((1, 2)).double()
        index = torch.arange(max(start, 1), start + chunk)
        if len(index) and index[0] - 1 >= lo:
            self.previous += w[:, index - start, index - 1 - lo].sum(-1).double()
        for r, row in enumerate(self.plan.rows):
            if start <= row < start + chunk:
                for h in self.rows:
                    self.rows[h][r, lo : lo + width] = w[h, row - start].numpy()

    def result(self) -> LayerStats:
        heads, t = len(self.entropy), self.length
        sink_rows = max(t - self.plan.sink_tokens, 1)
        return LayerStats(
            received=(self.received / (heads * t)).numpy(),
            entropy=(self.entropy / t).numpy(),
            distance=(self.distance / t).numpy(),
            sink=(self.sink / sink_rows).numpy(),
            previous=(self.previous / max(t - 1, 1)).numpy(),
            rows=self.rows,
        )


@torch.no_grad()
def layer_stats(
    query: torch.Tensor,
    key: torch.Tensor,
    scaling: float,
    plan: Plan,
    keep_rows: bool,
    window: int | None = None,
    softcap: float | None = None,
) -> LayerStats:
    """One layer's aggregates and rows from its queries (H, T, d) and keys (KV, T, d), chunk by chunk."""
    heads, length, _ = query.shape
    sums = _Sums(heads, length, plan, keep_rows)
    chunk = max(1, min(length, plan.chunk_floats // max(heads * length, 1)))
    for start in range(0, length, chunk):
        end = min(length, start + chunk)
        lo = max(0, start - window + 1) if window else 0
        s = _scores(query[:, start:end], key[:, lo:end], scaling, softcap)
        i = torch.arange(start, end)[:, None]
        j = torch.arange(lo, end)[None, :]
        allowed = j <= i
        if window:
            allowed &= j > i - window
        s = s.masked_fill(~allowed, float("-inf"))
        lse = torch.logsumexp(s, -1)
        w = torch.exp(s - lse[..., None])
        sums.add(w, s, lse, start, lo)
    return sums.result()


@torch.no_grad()
def rows_only(
    query: torch.Tensor,
    key: torch.Tensor,
    scaling: float,
    plan: Plan,
    window: int | None = None,
    softcap: float | None = None,
) -> dict[int, np.ndarray]:
    """Only the planned rows {head: (R, T)} of one layer: R query rows against the keys, no aggregates."""
    length = query.shape[1]
    heads = sorted(set(plan.heads))
    group = query.shape[0] // key.shape[0]
    rows = torch.tensor(plan.rows)
    out = {h: np.zeros((len(plan.rows), length), np.float32) for h in heads}
    for h in heads:
        s = _scores(query[h : h + 1, rows], key[h // group : h // group + 1], scaling, softcap)[0]
        j = torch.arange(length)[None, :]
        allowed = j <= rows[:, None]
        if window:
            allowed &= j > rows[:, None] - window
        out[h] = torch.softmax(s.masked_fill(~allowed, float("-inf")), -1).numpy()
    return out


@torch.no_grad()
def mean_rows_product(
    vectors: torch.Tensor,
    query: torch.Tensor,
    key: torch.Tensor,
    scaling: float,
    window: int | None = None,
    softcap: float | None = None,
    chunk_floats: int = 1 << 23,
) -> torch.Tensor:
    """``vectors @ mean_h A`` for one layer's attention A (H, T, T), never formed whole: vectors (R, T) ->
    (R, T), the rows of A made chunk by chunk from queries (H, T, d) and keys (KV, T, d)."""
    heads, length, _ = query.shape
    out = torch.zeros(vectors.shape[0], length, dtype=torch.float64)
    chunk = max(1, min(length, chunk_floats // max(heads * length, 1)))
    for start in range(0, length, chunk):
        end = min(length, start + chunk)
        lo = max(0, start - window + 1) if window else 0
        s = _scores(query[:, start:end], key[:, lo:end], scaling, softcap)
        i, j = torch.arange(start, end)[:, None], torch.arange(lo, end)[None, :]
        allowed = (j <= i) & (j > i - window) if window else j <= i
        w = torch.softmax(s.masked_fill(~allowed, float("-inf")), -1).mean(0)  # (C, K)
        out[:, lo:end] += vectors[:, start:end].double() @ w.double()
    return out


class Recorder:
    """Collects ``LayerStats`` per layer while the model runs (``capturing``)."""

    def __init__(self, plan: Plan, layers: int) -> None:
        self.plan, self.calls = plan, 0
        self.stats: list[LayerStats | None] = [None] * layers
        self.qk: list[tuple[torch.Tensor, torch.Tensor, float, Any, Any] | None] = [None] * layers

    def take(
        self, module: Any, query: torch.Tensor, key: torch.Tensor, scaling: Any, kwargs: dict[str, Any]
    ) -> None:
        layer = getattr(module, "layer_idx", None)
        layer = self.calls if layer is None else int(layer)
        self.calls += 1
        scale = float(scaling) if scaling is not None else query.shape[-1] ** -0.5
        if self.plan.keep_qk:
            window, cap = kwargs.get("sliding_window"), kwargs.get("softcap")
            self.qk[layer] = (query[0].detach().clone(), key[0].detach().clone(), scale, window, cap)
        if not self.plan.aggregates:
            if layer in self.plan.layers:
                rows = rows_only(
                    query[0], key[0], scale, self.plan, kwargs.get("sliding_window"), kwargs.get("softcap")
                )
                empty = np.zeros(0, np.float32)
                self.stats[layer] = LayerStats(empty, empty, empty, empty, empty, rows=rows)
            return
        self.stats[layer] = layer_stats(
            query[0],
            key[0],
            scale,
            self.plan,
            layer in self.plan.layers,
            window=kwargs.get("sliding_window"),
            softcap=kwargs.get("softcap"),
        )


def _delegate(module: Any, original: str) -> Any:
    """The attention function the model would have run: its family's eager function, or the registered one."""
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    if original in ("eager", None):
        return sys.modules[type(module).__module__].eager_attention_forward
    return ALL_ATTENTION_FUNCTIONS[original]


def _register() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import (
        ALL_MASK_ATTENTION_FUNCTIONS,
        AttentionMaskInterface,
        eager_mask,
        sdpa_mask,
    )

    if NAME in ALL_MASK_ATTENTION_FUNCTIONS:
        return

    def capture(module: Any, query: Any, key: Any, value: Any, attention_mask: Any, **kwargs: Any) -> Any:
        recorder, original = _ACTIVE.get(), getattr(module.config, "_attnkit_original", "sdpa")
        if recorder is not None:
            recorder.take(module, query, key, kwargs.get("scaling"), kwargs)
        return _delegate(module, original)(module, query, key, value, attention_mask, **kwargs)

    AttentionInterface.register(NAME, capture)
    masks: dict[str, Any] = {"eager": eager_mask, "sdpa": sdpa_mask}
    AttentionMaskInterface.register(NAME, lambda *a, **k: masks[_mask_kind()](*a, **k))


_MASK_KIND: contextvars.ContextVar[str] = contextvars.ContextVar("attnkit_mask", default="sdpa")


def _mask_kind() -> str:
    return _MASK_KIND.get()


def check_family(model: Any) -> None:
    """A model whose attention does not go through transformers' attention interface is refused."""
    module = sys.modules[type(model).__module__]
    if not hasattr(module, "ALL_ATTENTION_FUNCTIONS") and "ALL_ATTENTION_FUNCTIONS" not in vars(module):
        kind = getattr(model.config, "model_type", type(model).__name__)
        raise UsageError(
            f"{kind}: its attention is computed its own way (not through transformers' attention interface, "
            "e.g. ALiBi in Bloom or MPT), so attnkit inspect cannot read its queries and keys"
        )


@contextlib.contextmanager
def capturing(model: Any, plan: Plan) -> Iterator[Recorder]:
    """Within: every forward pass of ``model`` records its layers' stats into the yielded recorder."""
    _register()
    check_family(model)
    configs = [c for c in {id(m.config): m.config for m in model.modules() if hasattr(m, "config")}.values()]
    originals = [c._attn_implementation for c in configs]
    recorder = Recorder(plan, int(model.config.num_hidden_layers))
    token, mask = _ACTIVE.set(recorder), _MASK_KIND.set("eager" if originals[0] == "eager" else "sdpa")
    try:
        for config, original in zip(configs, originals):
            config._attnkit_original = original
            config._attn_implementation = NAME
        yield recorder
    finally:
        for config, original in zip(configs, originals):
            config._attn_implementation = original
        _ACTIVE.reset(token)
        _MASK_KIND.reset(mask)
