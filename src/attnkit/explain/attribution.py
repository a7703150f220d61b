"""Which words a HAN's decision rests on, by five rankings, for ``evaluation.faithfulness``.

- attention: the HAN's own weights, word weight x its sentence's weight (Yang et al. 2016, sec. 3.6);
- gradient_x_input and integrated_gradients: Captum's ``InputXGradient`` and ``IntegratedGradients``
  on the word embeddings (zero-embedding baseline, the embedding of padding), summed over the
  embedding dimension: signed evidence for the predicted class;
- leave_one_out: the drop in the predicted class's probability when that word (sentence) is removed;
- random: uniform scores, a floor any explanation must beat;
- norm, grad, value_zeroing: maps derived from the attention (``attention_maps``), at each level:
  norm ||alpha_ij h_ij|| x ||beta_i s_i|| (Kobayashi et al. 2020; the pooling moves the states
  themselves); grad (alpha_ij dp/dalpha_ij)^+, the total derivative through the sentence level
  (Chefer et al. 2021), sentences (beta_i dp/dbeta_i)^+; value_zeroing 1 - cos(d, d') of the
  document vector d when the word's (sentence's) state is taken out of its pooling, weights kept
  (Mohebbi et al. 2023). Rollout and flow do not apply: a HAN has no stacked residual attention.

Scores are NumPy arrays over word positions (B, N, W), 0 at padding; sentence scores (B, N) add a
sentence's word scores (attention: the sentence weights; leave_one_out: remove the whole sentence).
A HAN ensemble is attributed through every member's embeddings at once (Captum's tuple inputs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..errors import UsageError
from ..models.han import HANEnsemble
from ..names import ATTRIBUTION_METHODS as METHODS
from ..vocab import WORD_PAD
from .erasure import Units, erase_batch, unit_positions

MAP_METHODS = ("rollout", "flow", "norm", "grad", "value_zeroing")


class ProbabilityModel:
    """A HAN (or ensemble) read as class probabilities after the prior correction.

    Shapes: words (B, N, W) ids, word_mask (B, N, W) -> probabilities (B, C)."""

    def __init__(self, model: nn.Module, prior_bias: Tensor | None = None) -> None:
        self.model = model.eval()
        self.members: list[Any] = list(model.members) if isinstance(model, HANEnsemble) else [model]
        self.prior_bias = prior_bias

    def _finish(self, outputs: Sequence[object]) -> Tensor:
        logits = [o.logits for o in outputs]  # type: ignore[attr-defined]
        if len(logits) > 1:  # as HANEnsemble.forward: log of the mean probability
            mixed = torch.stack([x.softmax(-1) for x in logits]).mean(0).clamp_min(1e-12).log()
        else:
            mixed = logits[0]
        return torch.softmax(mixed if self.prior_bias is None else mixed - self.prior_bias, -1)

    def embeddings(self, words: Tensor) -> tuple[Tensor, ...]:
        """Each member's word embeddings: (B, N, W) -> per member (B, N, W, E)."""
        return tuple(m.embedding(words) for m in self.members)

    def from_embeddings(self, *args: Tensor) -> Tensor:
        """(member embeddings (B, N, W, E)..., word_mask (B, N, W)) -> probabilities (B, C)."""
        *embedded, mask = args
        return self._finish([m.forward_embedded(e, mask) for m, e in zip(self.members, embedded)])

    @torch.no_grad()
    def probabilities(self, words: Tensor, word_mask: Tensor) -> Tensor:
        return self._finish([m(words, word_mask) for m in self.members])

    methods = tuple(m for m in METHODS if m not in ("rollout", "flow"))

    def map_scores(self, words: Tensor, target: Tensor, method: str) -> tuple[np.ndarray, np.ndarray]:
        """norm, grad or value_zeroing scores of words (B, N, W) and sentences (B, N)."""
        if method in ("rollout", "flow"):
            raise UsageError(
                f"{method} does not apply to a HAN: it propagates attention through stacked residual "
                "self-attention layers; valid attention maps for a HAN: attention, norm, grad, value_zeroing"
            )
        return map_scores(self, words.numpy(), target.numpy(), method)

    @torch.no_grad()
    def attention(self, words: Tensor, word_mask: Tensor) -> tuple[np.ndarray, np.ndarray]:
        """-> word weights (B, N, W) and sentence weights (B, N) of the model (ensemble: the mean)."""
        outs = [m(words, word_mask) for m in self.members]
        word = torch.stack([o.word_weights for o in outs]).mean(0)
        sent = torch.stack([o.sentence_weights for o in outs]).mean(0)
        return word.numpy(), sent.numpy()


def map_scores(
    prob: ProbabilityModel, words: np.ndarray, target: np.ndarray, method: str
) -> tuple[np.ndarray, np.ndarray]:
    """norm, grad or value_zeroing scores of words (B, N, W) and sentences (B, N), members averaged."""
    ids = torch.from_numpy(words)
    mask = ids != WORD_PAD
    with torch.set_grad_enabled(method == "grad"):
        outs = [m.forward_embedded(m.embedding(ids), mask, parts=True) for m in prob.members]
        grads: Sequence[Tensor] = []
        if method == "grad":
            chosen = prob._finish(outs).gather(1, torch.from_numpy(target)[:, None]).sum()
            grads = torch.autograd.grad(
                chosen, [t for o in outs for t in (o.parts.sentences, o.parts.document)]
            )
    word, sentence = np.zeros(words.shape), np.zeros(words.shape[:2])
    for i, (member, out) in enumerate(zip(prob.members, outs)):
        w, v = _member_map(member, out, method, grads[2 * i : 2 * i + 2], mask)
        word, sentence = word + w / len(outs), sentence + v / len(outs)
    return word * words.astype(bool), sentence * words.astype(bool).any(-1)


@torch.no_grad()
def _member_map(
    member: Any, out: Any, method: str, grads: Sequence[Tensor], mask: Tensor
) -> tuple[np.ndarray, np.ndarray]:
    parts, alpha, beta = out.parts, out.word_weights, out.sentence_weights
    if method == "norm":
        sentence = beta * parts.sentence_states.norm(dim=-1)  # (B, N)
        word = alpha * parts.word_states.norm(dim=-1) * sentence.unsqueeze(-1)
    elif method == "grad":
        word = (alpha * (parts.word_states * grads[0].unsqueeze(2)).sum(-1)).clamp_min(0)
        sentence = (beta * (parts.sentence_states * grads[1].unsqueeze(1)).sum(-1)).clamp_min(0)
    else:
        document = parts.document  # (B, D)
        without = document.unsqueeze(1) - beta.unsqueeze(-1) * parts.sentence_states  # (B, N, D)
        sentence = 1 - F.cosine_similarity(document.unsqueeze(1), without, dim=-1)
        word = _zero_words(member, parts, alpha, mask)
    return word.numpy(), sentence.numpy()


def _zero_words(member: Any, parts: Any, alpha: Tensor, mask: Tensor, chunk: int = 512) -> Tensor:
    """1 - cos(d, d') per word (B, N, W): d' the document vector read with the word's state taken
    out of its sentence vector (the sentence level re-run on every variant)."""
    sentence_mask = mask.any(-1)
    jobs = mask.nonzero()  # (J, 3): b, i, j
    out = torch.zeros(mask.shape)
    for start in range(0, len(jobs), chunk):
        b, i, j = jobs[start : start + chunk].unbind(1)
        variants = parts.sentences[b].clone()  # (J', N, D)
        rows = torch.arange(len(b))
        variants[rows, i] -= alpha[b, i, j].unsqueeze(-1) * parts.word_states[b, i, j]
        changed = member.read_sentences(variants, sentence_mask[b]).parts.document
        out[b, i, j] = 1 - F.cosine_similarity(parts.document[b], changed, dim=-1)
    return out


def captum_scores(
    prob: ProbabilityModel, words: Tensor, target: Tensor, method: str, steps: int = 32
) -> tuple[np.ndarray, float]:
    """Captum attributions of ``target`` (B,) per word, summed over E: -> (B, N, W) and, for
    integrated gradients, the mean |completeness gap| relative to the probability change (else 0)."""
    from captum.attr import InputXGradient, IntegratedGradients

    mask = words != WORD_PAD
    inputs = tuple(e.detach().requires_grad_(True) for e in prob.embeddings(words))
    if method == "gradient_x_input":
        attributions = InputXGradient(prob.from_embeddings).attribute(
            inputs, target=target, additional_forward_args=(mask,)
        )
        gap = 0.0
    else:
        baselines = tuple(torch.zeros_like(e) for e in inputs)
        attributions, delta = IntegratedGradients(prob.from_embeddings).attribute(
            inputs,
            baselines=baselines,
            target=target,
            additional_forward_args=(mask,),
            n_steps=steps,
            internal_batch_size=max(words.shape[0] * 8, 64),
            return_convergence_delta=True,
        )
        with torch.no_grad():
            change = prob.from_embeddings(*inputs, mask) - prob.from_embeddings(*baselines, mask)
            change = change.gather(1, target[:, None]).squeeze(1).abs().clamp_min(1e-6)
        gap = float((delta.abs() / change).mean())
    total = torch.stack([a.detach().sum(-1) for a in attributions]).sum(0)  # (B, N, W)
    return (total * mask).numpy(), gap


def leave_one_out(
    prob: ProbabilityModel, words: np.ndarray, target: np.ndarray, units: Units, batch: int = 256
) -> np.ndarray:
    """Drop in the target's probability when each unit alone is removed: (B, N, W) or (B, N)."""
    base = prob.probabilities(torch.from_numpy(words), torch.from_numpy(words != WORD_PAD)).numpy()
    out = np.zeros(words.shape if units == "word" else words.shape[:2], dtype=np.float32)
    jobs = [(b, pos) for b in range(len(words)) for pos in unit_positions(words[b], units)]
    for start in range(0, len(jobs), batch):
        chunk = jobs[start : start + batch]
        variants = erase_batch([words[b] for b, _ in chunk], [[pos] for _, pos in chunk], units)
        p = prob.probabilities(torch.from_numpy(variants), torch.from_numpy(variants != 0)).numpy()
        for (b, pos), row in zip(chunk, p):
            out[(b,) + tuple(pos)] = base[b, target[b]] - row[target[b]]
    return out


def scores(
    prob: ProbabilityModel,
    words: np.ndarray,
    target: np.ndarray,
    method: str,
    units: Units,
    seed: int = 0,
    steps: int = 32,
) -> tuple[np.ndarray, float]:
    """Importance of every word (``units`` 'word': (B, N, W)) or sentence ('sentence': (B, N)) for
    the ``target`` class (B,) of documents ``words`` (B, N, W) ids. Returns (scores, IG gap)."""
    if method not in METHODS:
        raise UsageError(f"unknown attribution method {method!r}; valid: {', '.join(METHODS)}")
    mask = words != WORD_PAD
    gap = 0.0
    if method == "leave_one_out":
        return leave_one_out(prob, words, target, units), gap
    if method == "random":  # uniform per unit: a long sentence is no likelier to rank first
        shape = words.shape if units == "word" else words.shape[:2]
        drawn = np.random.default_rng(seed).random(shape).astype(np.float32)
        return drawn * (mask if units == "word" else mask.any(-1)), gap
    if method == "attention":
        word_w, sent_w = prob.attention(torch.from_numpy(words), torch.from_numpy(mask))
        word = word_w * sent_w[..., None]
        sentence_level: Callable[[np.ndarray], np.ndarray] = lambda w: sent_w  # noqa: E731
    elif method in MAP_METHODS:
        word, sent_v = prob.map_scores(torch.from_numpy(words), torch.from_numpy(target), method)
        sentence_level = lambda w: sent_v  # noqa: E731
    else:
        word, gap = captum_scores(prob, torch.from_numpy(words), torch.from_numpy(target), method, steps)
        sentence_level = lambda w: w.sum(-1)  # noqa: E731
    return (word if units == "word" else sentence_level(word)), gap
