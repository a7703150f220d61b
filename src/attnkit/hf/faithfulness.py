"""``attnkit faithfulness`` on Hugging Face sequence classifiers: the model read through the interface of
``explain.attribution.ProbabilityModel``, so the same erasure curves (comprehensiveness, sufficiency,
AOPC), Captum attributions and rankings measure how faithful its attention is.

A document is one row of the tokenizer's pieces (special tokens left out): ``documents`` gives (1, W) arrays
of piece id + 1, so that 0 stays "padding or erased" as for the HAN. Units are pieces ("word" in the
report) and the whole text ("sentence"). Around the row the model gets its own special tokens ([CLS] ...
[SEP]); an erased piece keeps its position and is masked out. Attention is the first token's row in the last
layer, averaged over heads, renormalized over the pieces; attributions are on the input embeddings of the
pieces (zero baseline), the special tokens' embeddings held fixed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor


class HFProbability:
    """A ``HFClassifier`` as ``ProbabilityModel``. Shapes: words (B, 1, W) piece ids + 1 -> (B, C)."""

    def __init__(self, classifier: Any) -> None:
        self.classifier, self.model = classifier, classifier.model.eval()
        framed = list(classifier.tokenizer("")["input_ids"])  # e.g. [CLS] [SEP]
        self.prefix, self.suffix = framed[:1], framed[1:]
        pad = classifier.tokenizer.pad_token_id
        self.pad = int(pad if pad is not None else 0)
        self.table = self.model.get_input_embeddings()

    def documents(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Each text as a (1, W) row of its piece ids + 1, cut to what the model reads."""
        room = self.classifier.max_tokens - len(self.prefix) - len(self.suffix)
        rows = []
        for text in texts:
            ids = self.classifier.tokenizer(text, add_special_tokens=False)["input_ids"][:room]
            rows.append(np.asarray([[i + 1 for i in ids] or [1]], dtype=np.int64))
        return rows

    def _ids(self, words: Tensor) -> tuple[Tensor, Tensor]:
        row = words[:, 0]  # (B, W)
        batch = row.shape[0]
        content = torch.where(row > 0, row - 1, torch.full_like(row, self.pad))
        ids = torch.cat(
            [torch.tensor([self.prefix] * batch), content, torch.tensor([self.suffix] * batch)], 1
        )
        ones = lambda n: torch.ones(batch, n, dtype=torch.long)  # noqa: E731
        mask = torch.cat([ones(len(self.prefix)), (row > 0).long(), ones(len(self.suffix))], 1)
        return ids.to(self.classifier.device), mask.to(self.classifier.device)

    def _softmax(self, logits: Tensor) -> Tensor:
        return torch.softmax(logits.float(), -1).cpu()

    def embeddings(self, words: Tensor) -> tuple[Tensor, ...]:
        """The pieces' input embeddings: (B, 1, W) -> ((B, 1, W, E),)."""
        ids, _ = self._ids(words)
        start = len(self.prefix)
        return (self.table(ids[:, start : start + words.shape[2]]).unsqueeze(1),)

    def from_embeddings(self, *args: Tensor) -> Tensor:
        """(piece embeddings (B, 1, W, E), word_mask (B, 1, W)) -> probabilities (B, C)."""
        embedded, mask = args
        batch = embedded.shape[0]
        around = [self.table(torch.tensor([ids] * batch)) for ids in (self.prefix, self.suffix)]
        full = torch.cat([around[0], embedded[:, 0], around[1]], 1)
        ones = lambda n: torch.ones(batch, n, dtype=torch.long)  # noqa: E731
        attention = torch.cat([ones(len(self.prefix)), mask[:, 0].long(), ones(len(self.suffix))], 1)
        return torch.softmax(self.model(inputs_embeds=full, attention_mask=attention).logits.float(), -1)

    @torch.no_grad()
    def probabilities(self, words: Tensor, word_mask: Tensor) -> Tensor:
        ids, mask = self._ids(words)
        return self._softmax(self.model(input_ids=ids, attention_mask=mask).logits)

    @torch.no_grad()
    def attention(self, words: Tensor, word_mask: Tensor) -> tuple[np.ndarray, np.ndarray]:
        """-> piece weights (B, 1, W) and the text's weight (B, 1) of ones."""
        ids, mask = self._ids(words)
        out = self.model(input_ids=ids, attention_mask=mask, output_attentions=True)
        first = out.attentions[-1].float().mean(1)[:, 0].cpu().numpy()  # (B, T)
        start = len(self.prefix)
        pieces = first[:, start : start + words.shape[2]] * word_mask[:, 0].numpy()
        pieces = pieces / np.clip(pieces.sum(1, keepdims=True), 1e-12, None)
        return pieces[:, None].astype(np.float32), np.ones((words.shape[0], 1), dtype=np.float32)

    methods: tuple[str, ...] = ("attention", "rollout", "flow", "grad", "gradient_x_input")
    methods += ("integrated_gradients", "leave_one_out", "random")

    def map_scores(self, words: Tensor, target: Tensor, method: str) -> tuple[np.ndarray, np.ndarray]:
        """rollout, flow or grad (Chefer et al. 2021, encoder rule) of the first token's row over the
        pieces: (B, 1, W) -> piece scores (B, 1, W), the text's score (B, 1) of ones."""
        from ..errors import UsageError
        from ..explain import attention_maps as am

        if method not in ("rollout", "flow", "grad"):
            raise UsageError(
                f"{method} does not apply to a Hugging Face classifier: it needs each head's value "
                "vectors, which transformers does not return; valid attention maps for it: attention, "
                "rollout, flow, grad"
            )
        ids, mask = self._ids(words)
        start, width = len(self.prefix), words.shape[2]
        with torch.set_grad_enabled(method == "grad"):
            out = self.model(input_ids=ids, attention_mask=mask, output_attentions=True)
            maps = list(out.attentions)  # per layer (B, H, N, N)
            grads = None
            if method == "grad":
                chosen = torch.softmax(out.logits.float(), -1).gather(1, target[:, None].to(ids.device)).sum()
                grads = torch.autograd.grad(chosen, maps)
        scores = np.zeros(words.shape, dtype=np.float32)
        for b in range(words.shape[0]):
            real = mask[b].bool().cpu().numpy()
            layers = [m[b].detach().float().cpu().numpy()[:, real][:, :, real] for m in maps]
            if method == "grad":
                assert grads is not None
                bars = [
                    am.gradient_weighted(w, g[b].float().cpu().numpy()[:, real][:, :, real])
                    for w, g in zip(layers, grads)
                ]
                row = am.self_relevance(bars, bars[0].shape[0])[0]
            else:
                levels = [am.residual_mix(w) for w in layers]
                row = am.rollout(levels)[0] if method == "rollout" else am.layered_flow(levels, [0])[0]
            positions = np.nonzero(real)[0]  # row index -> position in the framed input
            for k, pos in enumerate(positions):
                if start <= pos < start + width:
                    scores[b, 0, pos - start] = row[k]
        return scores * (words.numpy() > 0), np.ones((words.shape[0], 1), dtype=np.float32)
