"""Decoder-only language models from Hugging Face (``AutoModelForCausalLM``: GPT-2, Llama, ...): continue a
prompt and return the attention of every generated token over everything before it.

The continuation is ``generate()``'s own (greedy or beam, the model's generation config): a causal model's
attention for a token does not depend on the tokens after it, so one teacher-forced pass (eager attention)
over prompt + continuation gives exactly the attention each step had while generating, every layer and
head. Results are ``Translation``s: ``source_tokens`` are all the pieces a generated token can look at
(the prompt's, then the continuation's), ``target_tokens`` the continuation's, and ``attention`` (T, S) is
the chosen layer's head mean (zero on the pieces not yet generated).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..invariants import check_translation
from ..results import Translation, check_unicode
from .loading import load_model


class Continuation(Translation):
    """A causal LM's continuation of a prompt: ``source_tokens`` are every piece a generated token can look
    at (prompt, then continuation), ``target_tokens`` the continuation's pieces, ``target_ids`` their ids
    (an end-of-text token included when one was generated: there is no separate end piece)."""

    def __post_init__(self) -> None:
        check_translation(self, ids_with_end=True)


class HFCausalLM:
    """A Hugging Face causal language model and its tokenizer, from a folder (or Hub id)."""

    backend = "hf"
    kind = "causal"
    can_rerank = False
    description = "Hugging Face causal language model"

    def __init__(self, model: Any, tokenizer: Any, path: str = "", max_new_tokens: int = 40) -> None:
        self.model, self.tokenizer, self.path = model.eval(), tokenizer, path
        self.max_new_tokens = max_new_tokens
        self.device = next(model.parameters()).device
        config = model.config
        self.attention_layers = int(config.num_hidden_layers)
        self.attention_heads = int(config.num_attention_heads)
        self.default_layer = -1

    @classmethod
    def from_pretrained(cls, path_or_name: str | Path, device: str = "cpu") -> HFCausalLM:
        return cls(*load_model("AutoModelForCausalLM", path_or_name, device))

    @torch.no_grad()
    def _continue(
        self, prompt: str, beam: int, n_best: int
    ) -> tuple[list[int], list[list[int]], list[float]]:
        ids = self.tokenizer(prompt, return_tensors="pt")["input_ids"].to(self.device)
        pad = (
            self.tokenizer.pad_token_id
            if self.tokenizer.pad_token_id is not None
            else self.tokenizer.eos_token_id
        )
        out = self.model.generate(
            input_ids=ids,
            attention_mask=torch.ones_like(ids),
            do_sample=False,
            num_beams=beam,
            num_return_sequences=n_best,
            max_new_tokens=self.max_new_tokens,
            pad_token_id=pad,
            output_scores=beam > 1,
            return_dict_in_generate=True,
        )
        prompt_ids = ids[0].tolist()
        rows = [self._trim(row[len(prompt_ids) :].tolist(), pad) for row in out.sequences]
        scores = out.sequences_scores.tolist() if beam > 1 else [0.0] * len(rows)
        return prompt_ids, rows, scores

    @torch.no_grad()
    def generate_from(self, ids: Sequence[int], new_tokens: int) -> list[int]:
        """Greedy continuation of the token ids ``ids`` by ``generate()``: the new ids, to </s> at most."""
        tensor = torch.tensor([list(ids)], device=self.device)
        pad = self.tokenizer.pad_token_id
        pad = self.tokenizer.eos_token_id if pad is None else pad
        out = self.model.generate(
            input_ids=tensor,
            attention_mask=torch.ones_like(tensor),
            do_sample=False,
            num_beams=1,
            max_new_tokens=new_tokens,
            pad_token_id=pad,
        )
        return self._trim(out[0, len(ids) :].tolist(), pad)

    def _trim(self, row: list[int], pad: int) -> list[int]:
        eos = self.tokenizer.eos_token_id
        if eos is not None and eos in row:
            return row[: row.index(eos) + 1]
        while row and row[-1] == pad:
            row = row[:-1]
        return row

    @torch.no_grad()
    def all_attention(self, ids: Sequence[int]) -> np.ndarray:
        """Every layer's and head's self-attention over ``ids`` in one causal pass: (L, H, N, N)."""
        tensor = torch.tensor([list(ids)], device=self.device)
        out = self.model(input_ids=tensor, output_attentions=True, return_dict=True)
        return torch.stack([a[0] for a in out.attentions]).float().cpu().numpy()

    def translate(
        self,
        sentences: Sequence[str],
        beam: int = 1,
        batch_size: int = 1,
        alpha: float = 1.0,
        n_best: int = 1,
    ) -> list[Translation]:
        """Continue each prompt (``beam`` 1: greedy); the attention of each generated token over the
        prompt and the tokens generated before it. (The signature is ``TranslatorBase.translate``'s.)"""
        check_unicode(sentences, "prompt")
        return [self._one(p, beam, n_best) for p in sentences]

    def _one(self, prompt: str, beam: int, n_best: int) -> Translation:
        prompt_ids, rows, scores = self._continue(prompt, beam, n_best)
        best = rows[0]
        everything = prompt_ids + best
        maps = self.all_attention(everything)  # (L, H, N, N)
        # row of generated token t = the step that produced it: the query at the position before it
        steps = maps[self.default_layer].mean(0)[len(prompt_ids) - 1 : len(everything) - 1]  # (T, N)
        pieces = self.tokenizer.convert_ids_to_tokens(everything)
        text = lambda ids: str(self.tokenizer.decode(ids, skip_special_tokens=True)).strip()  # noqa: E731
        return Continuation(
            source=prompt,
            translation=text(best),
            source_tokens=list(pieces),
            target_tokens=list(pieces[len(prompt_ids) :]),
            attention=np.ascontiguousarray(steps, dtype=np.float32),
            score=float(scores[0]),
            alternatives=[text(r) for r in rows[1:]],
            alternative_scores=[float(s) for s in scores[1:]],
            source_ids=prompt_ids,
            target_ids=best,
        )

    def self_attention(self, result: Translation) -> None:
        """A decoder-only model's attention is all self-attention: ``layer_attention`` gives it."""
        return None

    def layer_attention(self, result: Translation) -> np.ndarray:
        """Every layer's and head's attention of the generated tokens: (L, H, T, S)."""
        everything = list(result.source_ids) + list(result.target_ids)
        n = len(result.source_ids)
        return self.all_attention(everything)[:, :, n - 1 : len(everything) - 1]
