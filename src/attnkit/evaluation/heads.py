"""Which attention heads a Transformer translator needs (Michel et al. 2019; Voita et al. 2019).

- ablation: each head masked alone (its output zeroed before the output projection), the change in
  corpus BLEU (decoding ``beam``) and in teacher-forced loss (mean NLL per target token);
- pruning curve: heads masked together in order of importance (least important first, importance =
  the loss increase when masked alone), BLEU and loss after each step (Michel et al., Fig. 3);
- confidence: a head's mean maximum attention weight over real queries, the end-of-sentence key left
  out (Voita et al. 2019, sec. 4.1);
- sinks: per layer, the share of attention on the end-of-sentence key, the first key and punctuation.

Heads are named (part, layer, head) with part encoder (self-attention), decoder (self) or cross.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch

from ..data.batching import make_batch
from ..device import model_device, to_device
from ..errors import UsageError
from ..tasks import with_article
from .head_batches import attention_modules, masked_scores
from .metrics import corpus_scores

PARTS = ("encoder", "decoder", "cross")
Head = tuple[str, int, int]


def check_model(translator: Any, name: str = "this model") -> Any:
    """The torch Transformer inside ``translator``; one line naming the model and what it is otherwise."""
    if getattr(translator, "kind", "") != "transformer":
        description = getattr(translator, "description", type(translator).__name__)
        hint = {
            "rnn": "an RNN has one attention, no heads",
            "hf": "run heads on the attnkit checkpoint it was exported from",
            "causal": "attnkit inspect reads a causal LM's heads",
        }.get(str(getattr(translator, "kind", "")), "load the checkpoint with --backend torch")
        raise UsageError(
            "heads masks each head of an attnkit Transformer on torch; "
            f"{name} is {with_article(description)} ({hint})"
        )
    return translator.model


def all_heads(model: Any) -> list[Head]:
    return [
        (part, layer, head)
        for part, modules in attention_modules(model).items()
        for layer, module in enumerate(modules)
        for head in range(module.num_heads)
    ]


@contextmanager
def masked_heads(model: Any, heads: Iterable[Head]) -> Iterator[None]:
    """Zero the given heads' outputs inside the block; every gate is removed after it."""
    modules = attention_modules(model)
    touched = []
    for part, layer, head in heads:
        if part not in modules or not 0 <= layer < len(modules[part]):
            raise UsageError(
                f"no {part} layer {layer}: the model has {len(modules.get(part, []))} such layers"
            )
        module = modules[part][layer]
        if not 0 <= head < module.num_heads:
            raise UsageError(f"head {head} out of range 0..{module.num_heads - 1}")
        if module.head_gate is None:
            module.head_gate = torch.ones(module.num_heads, device=model_device(model))
            touched.append(module)
        module.head_gate[head] = 0.0
    try:
        yield
    finally:
        for module in touched:
            module.head_gate = None


@torch.no_grad()
def corpus_loss(
    translator: Any, src_ids: list[list[int]], tgt_ids: list[list[int]], batch: int = 64
) -> float:
    """Mean negative log-likelihood per target token (</s> included) under teacher forcing."""
    model, total, count = translator.model, 0.0, 0
    for start in range(0, len(src_ids), batch):
        b = to_device(
            make_batch(src_ids[start : start + batch], tgt_ids[start : start + batch]), model_device(model)
        )
        log_probs = torch.log_softmax(model(b.src, b.src_mask, b.tgt_in).logits.float(), -1)
        index = model.output.targets(b.tgt_out).clamp_min(0)
        picked = log_probs.gather(2, index.unsqueeze(-1)).squeeze(-1)
        total -= float((picked * b.tgt_mask).sum())
        count += int(b.tgt_mask.sum())
    return total / max(count, 1)


def score_masks(
    translator: Any, data: dict[str, Any], beam: int, masks: Sequence[Sequence[Head]]
) -> list[dict[str, float]]:
    """Corpus BLEU (decoding ``beam``) and loss of the model under each mask (heads zeroed), every mask
    decoded in the same batches (``head_batches``)."""
    hypotheses, losses = masked_scores(translator, data["src_ids"], data["tgt_ids"], masks, beam)
    return [
        {"bleu": round(corpus_scores(h, data["references"]).bleu, 2), "loss": round(loss, 4)}
        for h, loss in zip(hypotheses, losses)
    ]


def head_report(
    translator: Any, sources: Sequence[str], references: Sequence[str], beam: int = 1, steps: int = 10
) -> dict[str, Any]:
    """Ablation, pruning curve, confidence and sinks. Returns JSON-ready
    {"baseline": {bleu, loss}, "heads": [{part, layer, head, bleu, loss, delta_bleu, delta_loss,
    confidence}], "pruning": [{pruned, share, bleu, loss}], "sinks": {part: [{layer, eos, first, punct}]}}."""
    model = check_model(translator)
    model.eval()
    src_ids, tgt_ids = translator.pair_ids(sources, references)
    data = {"references": list(references), "src_ids": src_ids, "tgt_ids": tgt_ids}
    confidence, sinks = attention_statistics(translator, src_ids, tgt_ids)
    heads = all_heads(model)
    baseline, *scores = score_masks(translator, data, beam, [[]] + [[h] for h in heads])
    rows: list[dict[str, Any]] = []
    for head, scored in zip(heads, scores):
        rows.append(
            {
                "part": head[0],
                "layer": head[1],
                "head": head[2],
                **scored,
                "delta_bleu": round(scored["bleu"] - baseline["bleu"], 2),
                "delta_loss": round(scored["loss"] - baseline["loss"], 4),
                "confidence": round(confidence[head], 4),
            }
        )
    order = [(r["part"], r["layer"], r["head"]) for r in sorted(rows, key=lambda r: r["delta_loss"])]
    points = sorted({round(i * len(order) / steps) for i in range(steps + 1)})
    curve = score_masks(translator, data, beam, [order[:k] for k in points])
    pruning = [{"pruned": k, "share": round(k / len(order), 3), **s} for k, s in zip(points, curve)]
    return {
        "baseline": baseline,
        "beam": beam,
        "n_sentences": len(sources),
        "heads": rows,
        "pruning": pruning,
        "sinks": sinks,
    }


def _punctuation(piece: str) -> bool:
    text = piece.replace("\u2581", "")
    return bool(text) and all(unicodedata.category(c).startswith("P") for c in text)


@torch.no_grad()
def attention_statistics(
    translator: Any, src_ids: list[list[int]], tgt_ids: list[list[int]], batch: int = 32
) -> tuple[dict[Head, float], dict[str, list[dict[str, float]]]]:
    """Per head its confidence; per part and layer the shares of attention on </s>, the first key and
    punctuation keys, means over real queries of the teacher-forced pairs."""
    model = translator.model
    sums: dict[tuple[str, int], np.ndarray] = {}
    count: dict[tuple[str, int], int] = {}
    for start in range(0, len(src_ids), batch):
        s_ids, t_ids = src_ids[start : start + batch], tgt_ids[start : start + batch]
        b = to_device(make_batch(s_ids, t_ids), model_device(model))
        trace = model.trace(model.source_embedding(b.src), b.src_mask, b.tgt_in)
        for i, (s, t) in enumerate(zip(s_ids, t_ids)):
            src_punct = [_punctuation(p) for p in translator.tokenizer.pieces(list(s))] + [False]
            tgt_punct = [False] + [_punctuation(p) for p in translator.target_tokenizer.pieces(list(t))]
            n_s, n_t = len(s) + 1, len(t) + 1
            maps = {
                "encoder": [(w[i, :, :n_s, :n_s], src_punct, True) for w in trace.encoder],
                "decoder": [(w[i, :, :n_t, :n_t], tgt_punct, False) for w in trace.decoder],
                "cross": [(w[i, :, :n_t, :n_s], src_punct, True) for w in trace.cross],
            }
            for part, layers in maps.items():
                for layer, (w, punct, has_eos) in enumerate(layers):
                    stats = _head_stats(w.float().cpu().numpy(), np.array(punct), has_eos)  # (H, 4)
                    key = (part, layer)
                    sums[key] = sums.get(key, 0) + stats
                    count[key] = count.get(key, 0) + 1
    confidence = {
        (part, layer, h): float(v[h, 0] / count[(part, layer)])
        for (part, layer), v in sums.items()
        for h in range(len(v))
    }
    sinks: dict[str, list[dict[str, Any]]] = {part: [] for part in PARTS}
    for part, layer in sorted(sums):
        eos, first, on_punct = (
            round(float(x), 4) for x in sums[(part, layer)][:, 1:].mean(0) / count[(part, layer)]
        )
        # decoder self-attention has no </s> key (its keys are <s> and the target so far)
        sinks[part].append(
            {"layer": layer, "eos": None if part == "decoder" else eos, "first": first, "punct": on_punct}
        )
    return confidence, sinks


def _head_stats(weights: np.ndarray, punct: np.ndarray, has_eos: bool) -> np.ndarray:
    """weights (H, T, S) of one pair -> per head [confidence, eos share, first share, punct share]."""
    keys = weights[..., :-1] if has_eos and weights.shape[-1] > 1 else weights
    confidence = keys.max(-1).mean(-1)
    eos = weights[..., -1].mean(-1) if has_eos else np.zeros(weights.shape[0])
    return np.stack([confidence, eos, weights[..., 0].mean(-1), weights[..., punct].sum(-1).mean(-1)], -1)
