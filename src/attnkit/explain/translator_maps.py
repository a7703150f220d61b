"""Attention-derived maps of a torch translator under forced decoding (``attention_maps``' methods).

``translator_maps`` returns per pair (source pieces + </s>, target pieces + </s>, map (T, S)) as
``Translator.forced_attention`` does, so every alignment method and plot applies. Row t is the step
that predicts target piece t; every row is a distribution over the real source pieces (uniform where a
method finds no positive mass, e.g. grad when every weight's gradient is negative).

Which method applies to which model:
- Transformer: all. attention, norm and value_zeroing read one decoder layer's cross-attention
  (``layer``; default the model's decoding layer; norm and attention may average chosen ``heads``);
  rollout, flow and grad read every layer (encoder self, decoder self and cross).
- RNN: attention, norm, grad, value_zeroing on its single attention; rollout and flow do not apply
  (one attention layer and no residual self-attention: its rollout is its attention).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor

from ..data.batching import make_batch
from ..device import model_device, to_device
from ..errors import UsageError
from . import attention_maps as am
from .map_kinds import check_method, model_kind

__all__ = ["check_method", "model_kind", "translator_maps", "id_maps", "with_attention_map"]


def translator_maps(
    translator: Any,
    sources: Sequence[str],
    targets: Sequence[str],
    method: str,
    layer: int | None = None,
    heads: Sequence[int] | None = None,
    batch_size: int = 16,
) -> list[tuple[list[str], list[str], np.ndarray]]:
    """Per pair (source pieces + </s>, target pieces + </s>, map (T, S)) by ``method``."""
    check_method(method, model_kind(translator), layer, heads, name=translator.path or "this model")
    layers, n_heads = translator.attention_layers, translator.attention_heads
    if layer is not None and not -layers <= layer < max(layers, 1):
        raise UsageError(f"layer {layer} out of range: the model has {layers} decoder layers")
    bad = [h for h in heads or [] if not 0 <= h < n_heads]
    if bad:
        raise UsageError(f"heads {bad} out of range 0..{n_heads - 1}")
    src_ids, tgt_ids = translator.pair_ids(sources, targets)
    return id_maps(translator, src_ids, tgt_ids, method, layer, heads, batch_size)


def id_maps(
    translator: Any,
    src_ids: list[list[int]],
    tgt_ids: list[list[int]],
    method: str,
    layer: int | None = None,
    heads: Sequence[int] | None = None,
    batch_size: int = 16,
) -> list[tuple[list[str], list[str], np.ndarray]]:
    """``translator_maps`` of pairs given as ids (without </s>), e.g. a translation's own."""
    kind = model_kind(translator)
    if translator.attention_layers and layer is None:
        layer = translator.default_layer
    out = []
    for start in range(0, len(src_ids), batch_size):
        chunk = range(start, min(start + batch_size, len(src_ids)))
        s_ids, t_ids = [src_ids[i] for i in chunk], [tgt_ids[i] for i in chunk]
        ends = len(translator.source_suffix)
        lengths = [(len(t) + 1, len(s) + ends) for s, t in zip(s_ids, t_ids)]
        if kind == "hf":
            maps = _hf_maps(translator, s_ids, t_ids, lengths, method, layer, heads)
        else:
            model = translator.model.eval()
            batch = to_device(make_batch(s_ids, t_ids), model_device(model))
            reader = _transformer_maps if kind == "transformer" else _rnn_maps
            maps = reader(model, batch, lengths, method, layer, heads)
        out += [translator.pair_maps(src_ids[i], tgt_ids[i], m) for m, i in zip(maps, chunk)]
    return out


def _hf_maps(
    translator: Any,
    s_ids: list[list[int]],
    t_ids: list[list[int]],
    lengths: list[tuple[int, int]],
    method: str,
    layer: Any,
    heads: Any,
) -> list[np.ndarray]:
    """attention, rollout, flow or grad of a Hugging Face encoder-decoder (its returned attentions)."""
    if method == "grad":
        with torch.enable_grad():
            out = translator.teacher_forced(s_ids, t_ids)
            tgt_out = torch.tensor(
                [
                    t + [translator.eos_id] + [translator.pad_id] * (max(map(len, t_ids)) - len(t))
                    for t in t_ids
                ]
            )
            log_probs = (
                torch.log_softmax(out.logits.float(), -1)
                .gather(2, tgt_out.to(out.logits.device).unsqueeze(-1))
                .squeeze(-1)
            )
            maps = _Layered(
                list(out.encoder_attentions), list(out.decoder_attentions), list(out.cross_attentions)
            )
            return [am.distribution(r) for r in _relevance_rows(maps, log_probs, lengths)]
    with torch.no_grad():
        out = translator.teacher_forced(s_ids, t_ids)
    layered = _Layered(list(out.encoder_attentions), list(out.decoder_attentions), list(out.cross_attentions))
    result = []
    for b, (t, s) in enumerate(lengths):
        if method == "attention":
            cross = layered.cross[layer][b, :, :t, :s]
            raw = (cross[list(heads)] if heads else cross).mean(0).float().cpu().numpy()
        else:
            raw = _propagated(layered, b, t, s, method)
        result.append(am.distribution(raw))
    return result


def with_attention_map(translator: Any, results: Sequence[Any], method: str) -> list[Any]:
    """Translations whose attention (and each alternative's) is replaced by ``method``'s map of the same
    pair, the decoded ids read back under forced decoding."""
    import dataclasses

    check_method(method, model_kind(translator), name=translator.path or "this model")
    out = []
    for result in results:
        if not result.translation or method == "attention":
            out.append(result)
            continue
        src_ids, tgt_ids = translator.result_ids(result)
        alt_ids = result.alternative_ids or [
            translator.target_tokenizer.encode(a) for a in result.alternatives
        ]
        maps = id_maps(translator, [src_ids] * (1 + len(alt_ids)), [tgt_ids, *alt_ids], method)
        out.append(
            dataclasses.replace(
                result,
                attention=maps[0][2].astype(np.float32),
                alternative_tokens=[m[1] for m in maps[1:]],
                alternative_attention=[m[2].astype(np.float32) for m in maps[1:]],
                attention_map=method,
            )
        )
    return out


def _target_log_probs(model: Any, logits: Tensor, tgt_out: Tensor) -> Tensor:
    """log p(y_t) per position (B, T) (padding positions: any value)."""
    index = model.output.targets(tgt_out).clamp_min(0)  # (B, T)
    return torch.log_softmax(logits.float(), -1).gather(2, index.unsqueeze(-1)).squeeze(-1)


def _numpy(tensors: Sequence[Tensor], b: int, rows: int | None, cols: int | None) -> list[np.ndarray]:
    """Row ``b`` of each (B, H, N, M) tensor cut to (H, rows, cols)."""
    return [t[b, :, :rows, :cols].detach().float().cpu().numpy() for t in tensors]


@dataclass
class _Layered:
    """Every attention of a batch, bottom layer first: encoder (B, H, S, S), decoder (B, H, T, T),
    cross (B, H, T, S)."""

    encoder: list[Tensor]
    decoder: list[Tensor]
    cross: list[Tensor]

    def pair(self, b: int, t: int, s: int, maps: _Layered | None = None) -> list[list[np.ndarray]]:
        """Pair ``b``'s maps (of ``maps``, default self) cut to its lengths, as NumPy (H, ., .)."""
        m = maps or self
        return [_numpy(m.encoder, b, s, s), _numpy(m.decoder, b, t, t), _numpy(m.cross, b, t, s)]


def _propagated(layered: _Layered, b: int, t: int, s: int, method: str) -> np.ndarray:
    """rollout or flow (T, S) of pair ``b`` through every layer."""
    levels = am.encoder_decoder_levels(*layered.pair(b, t, s))
    return am.rollout(levels)[:t] if method == "rollout" else am.layered_flow(levels, range(t))


def _relevance_rows(layered: _Layered, log_probs: Tensor, lengths: list[tuple[int, int]]) -> list[np.ndarray]:
    """Chefer et al.'s relevance: one backward pass of log p(y_t) per target position t for the whole
    batch (log_probs (B, T), in the graph of ``layered``); row t of each pair's R^ts. The rules run
    batched (``relevance_batch``), padding masked out of every A_bar."""
    tensors = [*layered.encoder, *layered.decoder, *layered.cross]
    n_enc, n_dec = len(layered.encoder), len(layered.decoder)
    s_real = torch.tensor([s for _, s in lengths])
    t_real = torch.tensor([t for t, _ in lengths])
    src_ok = (
        torch.arange(tensors[0].shape[-1] if n_enc else layered.cross[0].shape[-1])[None] < s_real[:, None]
    )
    tgt_ok = torch.arange(layered.cross[0].shape[-2])[None] < t_real[:, None]
    rows = [np.zeros((t, s)) for t, s in lengths]
    detached = [w.detach().float().cpu() for w in tensors]
    for pos in range(log_probs.shape[1]):
        live = [b for b, (t, _) in enumerate(lengths) if pos < t]
        if not live:
            continue
        grads = torch.autograd.grad(log_probs[live, pos].sum(), tensors, retain_graph=True)
        bars = [(w * g.detach().float().cpu()).clamp_min(0).mean(1) for w, g in zip(detached, grads)]
        masks = [(src_ok, src_ok)] * n_enc + [(tgt_ok, tgt_ok)] * n_dec + [(tgt_ok, src_ok)] * n_dec
        bars = [a * (r[:, :, None] & c[:, None, :]) for a, (r, c) in zip(bars, masks)]
        found = relevance_batch(bars[:n_enc], bars[n_enc : n_enc + n_dec], bars[n_enc + n_dec :])
        for b in live:
            t, s = lengths[b]
            rows[b][pos] = found[b, pos, :s].numpy()
    return rows


def relevance_batch(encoder: list[Tensor], decoder: list[Tensor], cross: list[Tensor]) -> Tensor:
    """``attention_maps.relevance`` over a batch: A_bar per layer (B, S, S), (B, T, T), (B, T, S) with
    padding rows and columns zero -> R^ts (B, T, S)."""
    batch, t, s = cross[0].shape
    eye_s, eye_t = torch.eye(s).expand(batch, s, s), torch.eye(t).expand(batch, t, t)

    def normalized(r: Tensor, eye: Tensor) -> Tensor:
        off = r - eye
        total = off.sum(-1, keepdim=True)
        return torch.where(total > 0, off / torch.where(total > 0, total, 1.0), 0.0) + eye

    r_ss = eye_s.clone()
    for a in encoder:
        r_ss = r_ss + a @ r_ss
    bar_ss = normalized(r_ss, eye_s)
    r_tt, r_ts = eye_t.clone(), torch.zeros(batch, t, s)
    for self_a, cross_a in zip(decoder, cross):
        r_tt = r_tt + self_a @ r_tt
        r_ts = r_ts + self_a @ r_ts
        r_ts = r_ts + normalized(r_tt, eye_t).transpose(1, 2) @ cross_a @ bar_ss
    return r_ts


def _transformer_maps(
    model: Any, batch: Any, lengths: list[tuple[int, int]], method: str, layer: Any, heads: Any
) -> list[np.ndarray]:
    if method == "grad":
        with torch.enable_grad():
            trace = model.trace(model.source_embedding(batch.src).detach(), batch.src_mask, batch.tgt_in)
            log_probs = _target_log_probs(model, trace.logits, batch.tgt_out)  # (B, T)
            rows = _relevance_rows(_Layered(trace.encoder, trace.decoder, trace.cross), log_probs, lengths)
        return [am.distribution(r) for r in rows]
    with torch.no_grad():
        trace = model.trace(model.source_embedding(batch.src), batch.src_mask, batch.tgt_in)
    layered = _Layered(trace.encoder, trace.decoder, trace.cross)
    out = []
    for b, (t, s) in enumerate(lengths):
        if method in ("rollout", "flow"):
            raw = _propagated(layered, b, t, s, method)
        else:
            raw = _cross_layer_map(model, trace, b, t, s, method, layer, heads)
        out.append(am.distribution(raw))
    return out


@torch.no_grad()
def _cross_layer_map(
    model: Any, trace: Any, b: int, t: int, s: int, method: str, layer: int, heads: Any
) -> np.ndarray:
    """attention, norm or value_zeroing of one decoder layer's cross-attention for pair ``b``."""
    decoder_layer = model.decoder[layer]
    weights = trace.passes[layer].cross[b : b + 1, :, :t, :s]  # (1, H, t, s)
    if heads:
        weights = weights[:, list(heads)]
    if method == "attention":
        return weights[0].mean(0).float().cpu().numpy()
    memory = trace.memory[b : b + 1, :s]  # (1, s, D)
    values = decoder_layer.cross_values(memory)  # (1, H, s, D)
    if heads:
        values = values[:, list(heads)]
    contributions = torch.einsum("bhts,bhsd->btsd", weights, values)[0]  # (t, s, D)
    if method == "norm":
        return contributions.norm(dim=-1).float().cpu().numpy()
    before = trace.passes[layer].before_cross[b, :t]  # (t, D)
    attended = contributions.sum(1) + decoder_layer.cross_bias()  # (t, D)
    reference = decoder_layer.finish(before + attended)  # (t, D)
    zeroed = decoder_layer.finish((before + attended).unsqueeze(1) - contributions)  # (t, s, D)
    return am.cosine_distance(reference.float().cpu().numpy(), zeroed.float().cpu().numpy())


def _rnn_maps(
    model: Any, batch: Any, lengths: list[tuple[int, int]], method: str, layer: Any, heads: Any
) -> list[np.ndarray]:
    with torch.set_grad_enabled(method == "grad"):
        trace = model.trace(model.source_embedding(batch.src).detach(), batch.src_mask, batch.tgt_in)
        weights = torch.cat(trace.weights, 1)  # (B, T, S)
        if method == "grad":
            log_probs = _target_log_probs(model, trace.logits, batch.tgt_out)
            live = torch.tensor([[pos < t for pos in range(log_probs.shape[1])] for t, _ in lengths])
            grads = torch.autograd.grad((log_probs * live.to(log_probs.device)).sum(), trace.weights)
            raw = (weights * torch.cat(grads, 1)).clamp_min(0)
        elif method == "attention":
            raw = weights
        else:
            values = model.context_values(trace.memory)  # (B, S, E)
            contributions = weights.unsqueeze(-1) * values.unsqueeze(1)  # (B, T, S, E)
            if method == "norm":
                raw = contributions.norm(dim=-1)
            else:  # value_zeroing: h~_t with source j's contribution to c_t removed
                pre = model.attentional_pre(trace.queries, weights @ trace.memory)  # (B, T, E)
                zeroed = torch.tanh(pre.unsqueeze(2) - contributions)  # (B, T, S, E)
                ref = trace.vectors.unsqueeze(2).expand_as(zeroed)
                raw = 1 - torch.nn.functional.cosine_similarity(ref, zeroed, dim=-1)
    found = raw.detach().float().cpu().numpy()
    return [am.distribution(found[b, :t, :s]) for b, (t, s) in enumerate(lengths)]
