"""Many head masks scored in one pass: each batch row carries its own head gates.

``attnkit heads`` scores one model under dozens of masks (each head alone, then the pruning curve).
Decoding each mask as its own run of the corpus leaves the CPU idle between small matrix products;
here a batch holds every sentence of a decoding batch under several masks at once. A row's gates
``(M, H)`` (one row of H multipliers per attention module) follow it through the search's reorders and
beam expansions, so each row is decoded exactly as it would be under its own mask alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from .. import search
from ..data.arrays import source_arrays
from ..data.batching import make_batch
from ..decoding.common import TorchState, TorchStepper
from ..device import model_device, to_device
from ..log import progress

Head = tuple[str, int, int]
ROWS = 1024  # batch rows (sentences x masks) decoded together: more is not faster on a CPU


def attention_modules(model: Any) -> dict[str, list[Any]]:
    """The MultiHeadAttention modules of a Transformer translator by part, bottom layer first."""
    return {
        "encoder": [layer.self_attn for layer in model.encoder],
        "decoder": [layer.self_attn for layer in model.decoder],
        "cross": [layer.cross_attn for layer in model.decoder],
    }


def gate_modules(model: Any) -> list[tuple[str, int, Any]]:
    """Every MultiHeadAttention of a Transformer translator as (part, layer, module), encoder first."""
    parts = attention_modules(model).items()
    return [(part, i, module) for part, modules in parts for i, module in enumerate(modules)]


def mask_gates(model: Any, masks: Sequence[Sequence[Head]]) -> Tensor:
    """One ``(M, H)`` gate of ones with zeros at each mask's heads: -> (K, M, H) for K masks."""
    modules = gate_modules(model)
    index = {(part, layer): m for m, (part, layer, _) in enumerate(modules)}
    gates = torch.ones(len(masks), len(modules), modules[0][2].num_heads, device=model_device(model))
    for k, heads in enumerate(masks):
        for part, layer, head in heads:
            gates[k, index[(part, layer)], head] = 0.0
    return gates


@contextmanager
def row_gates(model: Any, gates: Tensor) -> Iterator[None]:
    """Gate each batch row's heads inside the block: gates (B, M, H); every gate is removed after it."""
    modules = [module for _, _, module in gate_modules(model)]
    try:
        for m, module in enumerate(modules):
            module.head_gate = gates[:, m]
        yield
    finally:
        for module in modules:
            module.head_gate = None


@dataclass
class _GatedState:
    inner: Any  # the TorchStepper's state
    gates: Tensor  # (B, M, H), one row per batch row

    def reorder(self, index: np.ndarray) -> _GatedState:
        rows = torch.from_numpy(index).to(self.gates.device)
        return _GatedState(self.inner.reorder(index), self.gates.index_select(0, rows))

    def expand(self, beam: int) -> _GatedState:
        return _GatedState(self.inner.expand(beam), self.gates.repeat_interleave(beam, 0))


def shared_encode(model: Any, src: Tensor, src_mask: Tensor, gates: Tensor) -> Any:
    """The decoding state of ``len(gates)`` masked copies of one batch: src, src_mask (b, S) of the
    batch, gates (K, M, H) -> a state of K * b rows, mask-major. Encoder layers below a copy's first
    masked encoder head are the unmasked model's, computed once for all copies."""
    n_layers, b, copies = len(model.encoder), src.shape[0], gates.shape[0]
    inputs = model.encoder_inputs(src, src_mask)  # the unmasked model's, one per layer
    masked = gates[:, :n_layers].amin(-1) < 1  # (K, L): encoder layers with a masked head
    starts = torch.where(masked.any(1), masked.float().argmax(1), n_layers).tolist()
    outputs: list[Tensor | None] = [None] * copies
    for start in sorted(set(starts)):
        chosen = [k for k in range(copies) if starts[k] == start]
        if start == n_layers:
            for k in chosen:
                outputs[k] = inputs[n_layers]
            continue
        x = inputs[start].repeat(len(chosen), 1, 1)
        with row_gates(model, gates[chosen].repeat_interleave(b, 0)):
            x = model.encode_layers(x, src_mask.repeat(len(chosen), 1), start)
        for j, k in enumerate(chosen):
            outputs[k] = x[j * b : (j + 1) * b]
    return model.state_from_output(torch.cat(outputs), src_mask.repeat(copies, 1))  # type: ignore[arg-type]


class GatedStepper:
    """A Transformer as a ``search.Stepper`` over K masked copies of one batch (mask-major rows), each
    row decoded under its own head gates from the copies' ``shared_encode`` state."""

    def __init__(self, model: Any, gates: Tensor, state: Any) -> None:
        self.model, self.gates, self.state = model, gates, state  # gates (K, M, H), one per copy
        self.base = TorchStepper(model, model_device(model))
        self.target_ids = self.base.target_ids

    def encode(self, src: np.ndarray, src_mask: np.ndarray) -> _GatedState:
        """The copies' state, encoded already (``shared_encode``): src (K * b, S) its rows."""
        rows = src.shape[0] // self.gates.shape[0]
        return _GatedState(TorchState(self.state, self.base.device), self.gates.repeat_interleave(rows, 0))

    def step(
        self, prev: np.ndarray, state: _GatedState, k: int
    ) -> tuple[np.ndarray, np.ndarray, _GatedState, np.ndarray]:
        with row_gates(self.model, state.gates):
            values, ids, inner, attention = self.base.step(prev, state.inner, k)
        return values, ids, _GatedState(inner, state.gates), attention


def _groups(n_masks: int, batch: int, beam: int = 1) -> list[range]:
    """Masks decoded together with a batch of ``batch`` sentences, within ``ROWS`` rows (a beam's
    hypotheses each count as a row)."""
    per = max(1, ROWS // max(batch * beam, 1))
    return [range(k, min(k + per, n_masks)) for k in range(0, n_masks, per)]


def _runs(lengths: Sequence[int], batch: int) -> list[list[int]]:
    """Indices of the non-empty items, shortest first, in runs of ``batch`` (``translate``'s batches)."""
    order = sorted((i for i, n in enumerate(lengths) if n), key=lambda i: lengths[i])
    return [order[start : start + batch] for start in range(0, len(order), batch)]


@torch.no_grad()
def masked_scores(
    translator: Any,
    src_ids: list[list[int]],
    tgt_ids: list[list[int]],
    masks: Sequence[Sequence[Head]],
    beam: int,
    batch: int = 64,
) -> tuple[list[list[str]], list[float]]:
    """Each mask's translations of the sources (ids without end ids; decoding ``beam``) and mean
    negative log-likelihood per reference token (</s> included, teacher forced): -> (K masks) x (N
    sentences) strings, K losses. Sentences are decoded shortest first in runs of ``batch`` (as
    ``translate`` batches them), each run under many masks at once; a run's encoder states serve both
    its decoding and its loss."""
    model, on = translator.model, model_device(translator.model)
    gates, hypotheses = mask_gates(model, masks), [[""] * len(src_ids) for _ in masks]
    totals, count = np.zeros(len(masks)), 0
    runs = _runs([len(s) for s in src_ids], batch)
    runs += [[i for i, s in enumerate(src_ids) if not s]]  # empty sources: a loss, no decoding
    work = [(run, group) for run in runs if run for group in _groups(len(masks), len(run), beam)]
    for run, group in progress(work, len(work), "scoring head masks", unit="batch", minimum=1):
        src, src_mask = source_arrays([src_ids[i] for i in run], translator.source_suffix, translator.pad_id)
        count += sum(len(tgt_ids[i]) + 1 for i in run) if group.start == 0 else 0
        chosen = gates[group.start : group.stop]
        state = shared_encode(model, torch.from_numpy(src).to(on), torch.from_numpy(src_mask).to(on), chosen)
        for part in _by_target_length(run, tgt_ids):  # (positions in the run): less target padding
            rows = torch.tensor([c * len(run) + j for c in range(len(chosen)) for j in part], device=on)
            forced = make_batch([src_ids[run[j]] for j in part], [tgt_ids[run[j]] for j in part])
            found = _log_likelihoods(model, state.reorder(rows), chosen, to_device(forced, on))
            totals[group.start : group.stop] -= found
        if not src_ids[run[0]]:
            continue
        for r, hypothesis in enumerate(_decode(model, state, chosen, src, src_mask, beam)):
            k, i = group.start + r // len(run), run[r % len(run)]
            hypotheses[k][i] = translator.target_tokenizer.decode(hypothesis.tokens)
    return hypotheses, [float(t / max(count, 1)) for t in totals]


def _by_target_length(run: list[int], tgt_ids: list[list[int]], parts: int = 2) -> list[list[int]]:
    """A run's positions ordered by reference length and cut into ``parts`` (teacher forcing pads each part
    to its own longest reference only; sorted by source length, a run's references are 59% real tokens)."""
    order = sorted(range(len(run)), key=lambda j: len(tgt_ids[run[j]]))
    size = -(-len(order) // parts)
    return [order[k : k + size] for k in range(0, len(order), size)]


def _decode(
    model: Any, state: Any, gates: Tensor, src: np.ndarray, src_mask: np.ndarray, beam: int
) -> list[search.Hypothesis]:
    """The search over every copy of a run: src, src_mask (b, S) of the run, gates (K, M, H)."""
    stepper = GatedStepper(model, gates, state)
    src, src_mask = np.tile(src, (len(gates), 1)), np.tile(src_mask, (len(gates), 1))
    if beam <= 1:
        return search.greedy(stepper, src, src_mask)
    return [n[0] for n in search.beam(stepper, src, src_mask, beam_size=beam, n_best=1)]


def _log_likelihoods(model: Any, state: Any, gates: Tensor, forced: Any) -> np.ndarray:
    """Each copy's summed log-probability of the run's references (the output layer read at real
    target positions only): gates (K, M, H), forced a batch of the run's pairs -> (K,)."""
    copies, rows = len(gates), forced.tgt_in.shape[0]
    with row_gates(model, gates.repeat_interleave(rows, 0)):
        hidden = model.decode_hidden(forced.tgt_in.repeat(copies, 1), state)  # (K * b, T, D)
    real = hidden.view(copies, *forced.tgt_in.shape, -1)[:, forced.tgt_mask]  # (K, N, D)
    log_probs = torch.log_softmax(model.output(real).float(), -1)  # (K, N, V_out)
    index = model.output.targets(forced.tgt_out).clamp_min(0)[forced.tgt_mask]  # (N,)
    picked = log_probs.gather(2, index.expand(copies, -1).unsqueeze(-1)).squeeze(-1)
    return picked.sum(1).double().cpu().numpy()
