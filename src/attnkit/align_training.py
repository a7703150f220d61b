"""Guided alignment for ``attnkit align --adapt N --guided M``: after adaptation, each translator's
attention is trained toward the links both directions agree on.

Garg et al. (2019) train one attention head against alignments from a statistical aligner; awesome-align
(Dou and Neubig 2021) self-trains on the links its two directions agree on. Here the teacher is the
adapted pair itself: the links of ``mean`` symmetrization read with ``intersect`` (precision 0.91 on the
Hansards test set). Each direction is then fine-tuned for M steps on the bitext with its translation loss
plus ``weight`` x the cross-entropy between its attention rows and the teacher's (a target piece of a
linked target word should attend to the pieces of the source words linked to it; rows of unlinked words
are left free). No gold link is read. Shapes: attention (B, T, S), guides (T, S) per pair.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

Links = set[tuple[int, int]]


def guides(translator: Any, sources: Sequence[str], targets: Sequence[str], links: Sequence[Links]) -> list:
    """Per pair, the teacher's (T, S) piece matrix (rows: target pieces + </s>, cols: source pieces +
    </s>), each linked row a distribution, other rows zero; with the pairs' ids."""
    from .data.words import special_words, word_groups

    src_ids, tgt_ids = translator.pair_ids(sources, targets)
    out = []
    for s_ids, t_ids, found in zip(src_ids, tgt_ids, links):
        ends = len(translator.source_suffix)
        src_p, tgt_p, _ = translator.pair_maps(s_ids, t_ids, np.zeros((len(t_ids) + 1, len(s_ids) + ends)))
        src_words = [g for g, sp in zip(word_groups(src_p), special_words(src_p)) if not sp]
        tgt_words = [g for g, sp in zip(word_groups(tgt_p), special_words(tgt_p)) if not sp]
        guide = np.zeros((len(tgt_p), len(src_p)), dtype=np.float32)
        for s, t in found:
            if s < len(src_words) and t < len(tgt_words):
                for row in tgt_words[t]:
                    guide[row, src_words[s]] += 1.0 / len(src_words[s])
        sums = guide.sum(1, keepdims=True)
        out.append((s_ids, t_ids, np.divide(guide, sums, out=np.zeros_like(guide), where=sums > 0)))
    return out


def guided_finetune(
    translator: Any,
    checkpoint: str | Path,
    data: list,
    steps: int,
    out: str | Path,
    weight: float = 1.0,
    lr: float = 3e-4,
    batch_size: int = 32,
    seed: int = 1,
) -> Path:
    """Fine-tune ``translator``'s torch model (loaded from ``checkpoint``) on ``data`` (``guides``) for
    ``steps`` updates of translation loss + ``weight`` x guided cross-entropy; write the weights to ``out``
    (an inference checkpoint, float32) and return its path."""
    import torch
    import torch.nn.functional as F

    from .checkpoint import inference_payload, load_checkpoint, save_payload
    from .data.batching import make_batch
    from .device import model_device, to_device

    model = translator.model
    on = model_device(model)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        pick = rng.choice(len(data), size=min(batch_size, len(data)), replace=False)
        batch = to_device(make_batch([data[i][0] for i in pick], [data[i][1] for i in pick]), on)
        result = model(batch.src, batch.src_mask, batch.tgt_in)
        targets = model.output.targets(batch.tgt_out)
        logits = result.logits
        nll = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-100)
        guide = torch.zeros_like(result.attention)  # (B, T, S)
        for row, i in enumerate(pick):
            g = torch.from_numpy(data[i][2]).to(on)
            guide[row, : g.shape[0], : g.shape[1]] = g
        guided_rows = (guide.sum(-1) > 0).sum().clamp(min=1)
        ce = -(guide * torch.log(result.attention.clamp(min=1e-9))).sum() / guided_rows
        optimizer.zero_grad()
        (nll + weight * ce).backward()
        optimizer.step()
    model.eval()
    ckpt = load_checkpoint(checkpoint)
    ckpt.model = {k: v.detach().clone() for k, v in model.state_dict().items()}
    save_payload(inference_payload(ckpt, fp16=False), out)
    return Path(out)


def guide_pair(
    forward: str,
    reverse: str,
    sources: Sequence[str],
    targets: Sequence[str],
    steps: int,
    out_dir: str | Path,
    weight: float = 1.0,
    device: str = "cpu",
) -> tuple[str, str]:
    """Both directions guided by their agreed links (``mean`` + ``intersect`` of their attention) for
    ``steps`` updates each; the two new checkpoints' paths (in ``out_dir``)."""
    from .alignment.aligner import align_corpus
    from .api import load_translator

    pair = [load_translator(m, device=device, backend="torch", rerank=False) for m in (forward, reverse)]
    teacher = align_corpus(pair[0], sources, targets, reverse=pair[1], method="intersect", how="mean")
    flipped = [{(t, s) for s, t in found} for found in teacher.links]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for translator, ckpt, (src, tgt, links), name in zip(
        pair,
        (forward, reverse),
        ((sources, targets, teacher.links), (targets, sources, flipped)),
        ("fwd", "rev"),
    ):
        data = guides(translator, src, tgt, links)
        paths.append(str(guided_finetune(translator, ckpt, data, steps, out / f"guided-{name}.pt", weight)))
    return paths[0], paths[1]
