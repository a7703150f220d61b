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
    # scores per chunk (H x rows x keys): 4 MB of float32, so that a chunk's scores, weights and temporaries
    # stay in cache. One layer at 4k tokens, 12 heads, 2 cores: 0.385 s with 1M-float chunks, 0.457 s with
    # 8M, 0.659 s with 256k (per-chunk overhead); torch's SDPA on the same layer 0.213 s
    chunk_floats: int = 1 << 20
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


@dataclass
class Scoring:
    """How a family turns a layer's queries and keys into scores: ``scaling * q k^T``, soft-capped (Gemma2)
    and plus a per-key bias (ALiBi: Bloom, MPT; (H, T)), then masked causally and to a sliding window."""

    scaling: float
    window: int | None = None
    softcap: float | None = None
    bias: torch.Tensor | None = None


def _scores(
    q: torch.Tensor, k: torch.Tensor, how: Scoring, lo: int = 0, buffer: torch.Tensor | None = None
) -> torch.Tensor:
    """q (H, C, d), k (KV, K, d) of keys lo.. -> (H, C, K) float32, grouped-query heads sharing their key
    head; written into ``buffer`` (a flat float32 tensor at least that large) when given."""
    heads, rows, dim = q.shape
    groups = heads // k.shape[0]
    left, right = q.reshape(k.shape[0], groups * rows, dim).float(), k.float().transpose(1, 2)
    if buffer is None:
        s = torch.matmul(left, right)
    else:
        s = torch.bmm(
            left, right, out=buffer[: heads * rows * k.shape[1]].view(k.shape[0], groups * rows, -1)
        )
    s = s.view(heads, rows, -1).mul_(how.scaling)
    if how.softcap is not None:
        s = torch.tanh(s.div_(how.softcap)).mul_(how.softcap)
    if how.bias is not None:
        s.add_(how.bias[:, None, lo : lo + s.shape[2]].float())
    return s


MASKED = -1e30  # a masked score: exp underflows to exactly 0, as with -inf, and 0 x MASKED stays finite


def _mask(s: torch.Tensor, start: int, lo: int, window: int | None) -> None:
    """Mask (in place) the keys a query row may not see: later tokens (the block from ``start``) and, with a
    sliding window, keys ``window`` or more tokens back (the block from ``lo``). s (H, C, K) of rows start..
    over keys lo..; only those two C-wide blocks can hold masked entries."""
    chunk = s.shape[1]
    i = torch.arange(start, start + chunk)[:, None]
    blocks = [start] + ([lo] if window and lo < start else [])
    for first in blocks:
        j = torch.arange(first, min(first + chunk, lo + s.shape[2]))[None, :]
        hidden = j > i
        if window:
            hidden |= j <= i - window
        s[:, :, first - lo : first - lo + j.shape[1]].masked_fill_(hidden, MASKED)


def _exp(
    s: torch.Tensor, buffer: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Row softmax of s (H, C, K), left unnormalized: e = exp(s - row max), 1 / its row sums (H, C, 1) and
    each row's log-sum-exp (H, C). The weights are ``e * inverse``; the aggregates divide their small sums
    instead of the (H, C, K) weights (one pass fewer over the largest tensor)."""
    top = s.amax(-1, keepdim=True)
    out = None if buffer is None else buffer[: s.numel()].view(s.shape)
    e = torch.sub(s, top, out=out).exp_()
    total = e.sum(-1, keepdim=True)
    return e, total.reciprocal(), (top + total.log()).squeeze(-1)


def _softmax(s: torch.Tensor) -> torch.Tensor:
    e, inverse, _ = _exp(s)
    return e.mul_(inverse)


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

    def add(
        self, e: torch.Tensor, inverse: torch.Tensor, s: torch.Tensor, lse: torch.Tensor, start: int, lo: int
    ) -> None:
        """Query rows start.. over keys lo..lo+K: e, s (H, C, K) unnormalized weights and scores, inverse
        (H, C, 1) the weights' normalizers, lse (H, C). Every sum over keys is a matrix product."""
        heads, chunk, width = e.shape
        flat, inv = e.view(-1, width), inverse.view(-1)
        self.received[lo : lo + width] += (inv[None, :] @ flat)[0].double()
        # entropy = lse - sum_j w_j s_j (masked scores are finite, their weights 0)
        dots = torch.linalg.vecdot(e, s, dim=-1).view(-1) * inv  # (a batched bmm was 4x slower)
        self.entropy += (lse - dots.view(heads, chunk)).sum(-1).double()
        positions = torch.arange(lo, lo + width, dtype=torch.float32)
        queries = torch.arange(start, start + chunk, dtype=torch.float64)
        self.distance += queries.sum() - ((flat @ positions) * inv).view(heads, chunk).sum(-1).double()
        past = max(self.plan.sink_tokens - start, 0)  # rows past the sink tokens only
        if past < chunk and lo == 0:
            first = e[:, past:, : self.plan.sink_tokens].sum(-1) * inverse[:, past:, 0]
            self.sink += first.sum(-1).double()
        index = torch.arange(max(start, 1), start + chunk)
        if len(index) and index[0] - 1 >= lo:
            self.previous += (
                (e[:, index - start, index - 1 - lo] * inverse[:, index - start, 0]).sum(-1).double()
            )
        for r, row in enumerate(self.plan.rows):
            if start <= row < start + chunk:
                for h in self.rows:
                    self.rows[h][r, lo : lo + width] = (e[h, row - start] * inverse[h, row - start]).numpy()

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
    query: torch.Tensor, key: torch.Tensor, how: Scoring, plan: Plan, keep_rows: bool
) -> LayerStats:
    """One layer's aggregates and rows from its queries (H, T, d) and keys (KV, T, d), chunk by chunk."""
    heads, length, _ = query.shape
    sums = _Sums(heads, length, plan, keep_rows)
    chunk = max(1, min(length, plan.chunk_floats // max(heads * length, 1)))
    # two buffers reused by every chunk (fresh 4-8 MB tensors each chunk cost page faults)
    scores, weights = torch.empty(heads * chunk * length), torch.empty(heads * chunk * length)
    for start in range(0, length, chunk):
        end = min(length, start + chunk)
        lo = max(0, start - how.window + 1) if how.window else 0
        s = _scores(query[:, start:end], key[:, lo:end], how, lo, scores)
        _mask(s, start, lo, how.window)
        e, inverse, lse = _exp(s, weights)
        sums.add(e, inverse, s, lse, start, lo)
    return sums.result()


@torch.no_grad()
def rows_only(query: torch.Tensor, key: torch.Tensor, how: Scoring, plan: Plan) -> dict[int, np.ndarray]:
    """Only the planned rows {head: (R, T)} of one layer: R query rows against the keys, no aggregates."""
    length = query.shape[1]
    heads = sorted(set(plan.heads))
    group = query.shape[0] // key.shape[0]
    rows = torch.tensor(plan.rows)
    out = {h: np.zeros((len(plan.rows), length), np.float32) for h in heads}
    for h in heads:
        one = Scoring(how.scaling, how.window, how.softcap, None if how.bias is None else how.bias[h : h + 1])
        s = _scores(query[h : h + 1, rows], key[h // group : h // group + 1], one)[0]
        j = torch.arange(length)[None, :]
        allowed = j <= rows[:, None]
        if how.window:
            allowed &= j > rows[:, None] - how.window
        out[h] = torch.softmax(s.masked_fill(~allowed, float("-inf")), -1).numpy()
    return out


@torch.no_grad()
def mean_rows_product(
    vectors: torch.Tensor, query: torch.Tensor, key: torch.Tensor, how: Scoring, chunk_floats: int = 1 << 20
) -> torch.Tensor:
    """``vectors @ mean_h A`` for one layer's attention A (H, T, T), never formed whole: vectors (R, T) ->
    (R, T), the rows of A made chunk by chunk from queries (H, T, d) and keys (KV, T, d)."""
    heads, length, _ = query.shape
    out = torch.zeros(vectors.shape[0], length, dtype=torch.float64)
    chunk = max(1, min(length, chunk_floats // max(heads * length, 1)))
    for start in range(0, length, chunk):
        end = min(length, start + chunk)
        lo = max(0, start - how.window + 1) if how.window else 0
        s = _scores(query[:, start:end], key[:, lo:end], how, lo)
        _mask(s, start, lo, how.window)
        w = _softmax(s).mean(0)  # (C, K)
        out[:, lo:end] += vectors[:, start:end].double() @ w.double()
    return out


class Recorder:
    """Collects ``LayerStats`` per layer while the model runs (``capturing``)."""

    def __init__(self, plan: Plan, layers: int) -> None:
        self.plan, self.calls = plan, 0
        self.stats: list[LayerStats | None] = [None] * layers
        self.qk: list[tuple[torch.Tensor, torch.Tensor, Scoring] | None] = [None] * layers

    def take(
        self, module: Any, query: torch.Tensor, key: torch.Tensor, scaling: Any, kwargs: dict[str, Any]
    ) -> None:
        """One layer's queries (1, H, T, d) and keys (1, KV, T, d) as the model made them."""
        layer = getattr(module, "layer_idx", None)
        layer = self.calls if layer is None else int(layer)
        self.calls += 1
        scale = float(scaling) if scaling is not None else query.shape[-1] ** -0.5
        how = Scoring(scale, kwargs.get("sliding_window"), kwargs.get("softcap"), kwargs.get("bias"))
        if self.plan.keep_qk:
            self.qk[layer] = (query[0].detach().clone(), key[0].detach().clone(), how)
        if not self.plan.aggregates:
            if layer in self.plan.layers:
                empty = np.zeros(0, np.float32)
                rows = rows_only(query[0], key[0], how, self.plan)
                self.stats[layer] = LayerStats(empty, empty, empty, empty, empty, rows=rows)
            return
        self.stats[layer] = layer_stats(query[0], key[0], how, self.plan, layer in self.plan.layers)


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
    """A model whose attention goes neither through transformers' attention interface nor through one of the
    ALiBi attentions ``hf.alibi`` reads (Bloom, MPT) is refused."""
    from .alibi import reads

    module = sys.modules[type(model).__module__]
    if "ALL_ATTENTION_FUNCTIONS" not in vars(module) and not reads(model):
        kind = getattr(model.config, "model_type", type(model).__name__)
        raise UsageError(
            f"{kind}: its attention is computed its own way (not through transformers' attention interface, "
            "nor Bloom's or MPT's ALiBi), so attnkit inspect cannot read its queries and keys"
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
    from .alibi import attach

    hooks = attach(model, recorder)
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
        for hook in hooks:
            hook.remove()
