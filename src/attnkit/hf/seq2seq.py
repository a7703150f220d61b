"""Encoder-decoder Hugging Face models (Marian, BART/mBART, T5, M2M100/NLLB, Pegasus, ...) as a
``TranslatorBase``: attnkit's search drives a stepper over the model's own key/value cache, and every
decoder layer's and head's cross-attention comes back with each step.

Greedy search equals ``generate(num_beams=1, do_sample=False)`` token for token (tested); the logits
processors ``generate`` would apply from the model's generation config are applied here too where
attnkit has them (suppressed and bad single tokens, a forced first token, a minimum length); any other
(repetition penalties, n-gram blocking, ...) is named in a warning, since results may then differ.
"""

from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..errors import UsageError
from ..translate_base import TranslatorBase
from .loading import load_model
from .tokens import HFTokens

# generation-config settings attnkit applies, and those it does not (a warning names them when set)
UNSUPPORTED = {
    "no_repeat_ngram_size": 0,
    "encoder_no_repeat_ngram_size": 0,
    "repetition_penalty": 1.0,
    "encoder_repetition_penalty": 1.0,
    "exponential_decay_length_penalty": None,
    "sequence_bias": None,
    "renormalize_logits": False,
}


@dataclass
class HFState:
    """Encoder output (B, S, D), its mask (B, S), the decoder cache (None before the first step) and
    how many tokens were decoded."""

    hidden: torch.Tensor
    mask: torch.Tensor
    cache: Any = None
    position: int = 0

    def reorder(self, index: np.ndarray) -> HFState:
        rows = torch.from_numpy(np.asarray(index, dtype=np.int64)).to(self.hidden.device)
        if self.cache is not None:
            self.cache.reorder_cache(rows)  # in place: the old state is never used again
        return HFState(self.hidden[rows], self.mask[rows], self.cache, self.position)

    def expand(self, beam: int) -> HFState:
        if self.cache is not None:
            raise ValueError("expand before the first step only")
        return HFState(self.hidden.repeat_interleave(beam, 0), self.mask.repeat_interleave(beam, 0))


class HFStepper:
    """A ``search.Stepper`` over an encoder-decoder model; each step returns the head mean of
    ``default_layer``'s cross-attention (all layers come from ``HFTranslator.layer_attention``)."""

    def __init__(self, model: Any, default_layer: int = -1) -> None:
        self.model, self.default_layer = model, default_layer
        config, generation = model.config, model.generation_config
        self.device = next(model.parameters()).device
        self.bos_id = start_token(config, generation)
        eos = generation.eos_token_id if generation.eos_token_id is not None else config.eos_token_id
        self.eos_id = int(eos[0] if isinstance(eos, (list, tuple)) else eos)
        self.target_ids = np.arange(int(model.get_output_embeddings().weight.shape[0]), dtype=np.int64)
        self.suppressed = suppressed_tokens(generation)
        self.first_suppressed = list(generation.begin_suppress_tokens or [])
        self.forced_first = generation.forced_bos_token_id
        self.min_length = int(generation.min_length or 0)
        self.min_new_tokens = int(generation.min_new_tokens or 0)
        self.cache_name = (
            "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
        )

    @torch.no_grad()
    def encode(self, src: np.ndarray, src_mask: np.ndarray) -> HFState:
        ids = torch.from_numpy(src).to(self.device)
        mask = torch.from_numpy(src_mask).to(self.device).long()
        hidden = self.model.get_encoder()(input_ids=ids, attention_mask=mask).last_hidden_state
        return HFState(hidden, mask)

    @torch.no_grad()
    def step(
        self, prev: np.ndarray, state: HFState, k: int
    ) -> tuple[np.ndarray, np.ndarray, HFState, np.ndarray]:
        out = self.model(
            encoder_outputs=(state.hidden,),
            attention_mask=state.mask,
            decoder_input_ids=torch.from_numpy(prev).to(self.device),
            use_cache=True,
            output_attentions=True,
            return_dict=True,
            **{self.cache_name: state.cache},
        )
        log_probs = self.processed(out.logits[:, -1].float(), state.position)
        values, ids = torch.topk(log_probs, k, dim=-1)
        attention = (
            out.cross_attentions[self.default_layer][:, :, -1].float().mean(1, keepdim=True)
        )  # (B, 1, S)
        cache = getattr(out, "cache", None) or getattr(out, "past_key_values", None)
        new = HFState(state.hidden, state.mask, cache, state.position + 1)
        return values.cpu().numpy(), ids.cpu().numpy(), new, attention.cpu().numpy()

    def processed(self, logits: torch.Tensor, position: int) -> torch.Tensor:
        """Log-probabilities after the processors ``generate`` would apply at this position. As in its
        beam search, they act on the log-softmax (a suppressed token's mass is not handed to the others)."""
        log_probs = torch.log_softmax(logits, dim=-1)
        if self.suppressed:
            log_probs[:, self.suppressed] = -float("inf")
        if position == 0 and self.first_suppressed:
            log_probs[:, self.first_suppressed] = -float("inf")
        if position + 1 < self.min_length or position < self.min_new_tokens:  # min_length counts the start
            log_probs[:, self.eos_id] = -float("inf")
        if position == 0 and self.forced_first is not None:
            log_probs = torch.full_like(log_probs, -float("inf"))
            log_probs[:, self.forced_first] = 0.0
        return log_probs


def suppressed_tokens(generation: Any) -> list[int]:
    """Single tokens ``generate`` never produces: ``suppress_tokens`` and one-token ``bad_words_ids``."""
    found = list(generation.suppress_tokens or [])
    found += [w[0] for w in generation.bad_words_ids or [] if len(w) == 1]
    return sorted(set(found))


# settings a generation config may set that attnkit's search replaces by its own (said in the warning)
REPLACED = {
    "num_beams": "--beam (default 5)",
    "max_length": "attnkit's length limit (1.5 x source + 10 tokens)",
    "max_new_tokens": "attnkit's length limit (1.5 x source + 10 tokens)",
}


def start_token(config: Any, generation: Any) -> int:
    """The decoder's start id: the generation config's, else the model config's; one line if neither."""
    for found in (generation.decoder_start_token_id, config.decoder_start_token_id):
        if found is not None:
            return int(found[0] if isinstance(found, (list, tuple)) else found)
    raise UsageError(
        "no decoder_start_token_id in config.json or generation_config.json: the decoder's start"
    )


def differences(generation: Any) -> list[str]:
    """Generation settings ``generate`` would apply that attnkit's search does not: unsupported
    processors, multi-token ``bad_words_ids``, and beam and length settings attnkit sets itself."""
    found = [
        f"{k}={getattr(generation, k)}"
        for k, off in UNSUPPORTED.items()
        if getattr(generation, k, None) not in (None, off)
    ]
    found += [f"bad_words_ids={w}" for w in generation.bad_words_ids or [] if len(w) > 1]
    given = generation.to_diff_dict()
    found += [f"{k}={given[k]} (attnkit uses {REPLACED[k]})" for k in REPLACED if given.get(k) is not None]
    return found


class HFTranslator(TranslatorBase):
    """A Hugging Face encoder-decoder model and its tokenizer, loaded from a folder (or Hub id)."""

    backend = "hf"
    kind = "hf"  # type: ignore[assignment]
    tokenizer: HFTokens
    target_tokenizer: HFTokens
    can_rerank = False  # generate()'s length penalty: n-best scores are not log-probabilities

    def __init__(self, model: Any, tokenizer: Any, path: str = "") -> None:
        self.model, self.hf_tokenizer, self.path = model.eval(), tokenizer, path
        # a folder written by `attnkit export --format hf` asks for attnkit's beam rules and its layer
        self.rules = str(getattr(model.config, "attnkit_search", "generate"))
        self.stepper = HFStepper(model, int(getattr(model.config, "attnkit_attention_layer", -1)))
        forced = [self.stepper.forced_first] if self.stepper.forced_first is not None else []
        self.tokenizer = HFTokens(tokenizer)
        self.target_tokenizer = HFTokens(tokenizer, target=True, skip=forced)
        self.eos_id = self.stepper.eos_id
        self.pad_id = int(model.config.pad_token_id if model.config.pad_token_id is not None else self.eos_id)
        self.eos_piece = str(tokenizer.convert_ids_to_tokens(self.eos_id))
        positions = getattr(model.config, "max_position_embeddings", None) or 512
        most = int(min(positions, getattr(tokenizer, "model_max_length", positions)))
        self.max_source_tokens = most - len(self.tokenizer.suffix)
        unsupported = differences(model.generation_config)
        if unsupported:
            warnings.warn(
                f"{path}: the generation config sets {', '.join(unsupported)}, which attnkit's search "
                "does not apply: translations may differ from generate()",
                stacklevel=2,
            )

    @classmethod
    def from_pretrained(cls, path_or_name: str | Path, device: str = "cpu") -> HFTranslator:
        return cls(*load_model("AutoModelForSeq2SeqLM", path_or_name, device))

    def _stepper(self) -> HFStepper:
        return self.stepper

    def _beam(
        self,
        stepper: Any,
        src: np.ndarray,
        src_mask: np.ndarray,
        beam: int,
        alpha: float,
        n_best: int,
        limits: dict[str, Any],
    ) -> list[list[Any]]:
        """generate()'s beam rules (``search_hf``): its length penalty and early stopping, from the
        model's generation config unless ``alpha`` (the length penalty) is given otherwise than 1.0."""
        from .. import search_hf

        if self.rules == "attnkit":
            return super()._beam(stepper, src, src_mask, beam, alpha, n_best, limits)
        generation = self.model.generation_config
        penalty = alpha if alpha != 1.0 else float(generation.length_penalty or 1.0)
        stop = generation.early_stopping if generation.early_stopping is not None else False
        return search_hf.beam(stepper, src, src_mask, beam, penalty, n_best, stop, **limits)

    @property
    def source_suffix(self) -> list[int]:
        return self.tokenizer.suffix

    @property
    def source_end_pieces(self) -> list[str]:
        return self.tokenizer.pieces(self.tokenizer.suffix)

    def prepare(self, text: str) -> str:
        """The text as it is (the tokenizer normalizes as it was trained to); whitespace-only is empty."""
        return text if text.strip() else ""

    @property
    def attention_layers(self) -> int:
        config = self.model.config
        found: Any = getattr(config, "decoder_layers", None) or getattr(config, "num_decoder_layers", 0)
        return int(found)

    @property
    def attention_heads(self) -> int:
        config = self.model.config
        names = ("decoder_attention_heads", "num_heads", "num_attention_heads")
        return int(next(getattr(config, n) for n in names if getattr(config, n, None)))

    @property
    def default_layer(self) -> int:
        return self.stepper.default_layer

    def _teacher_forced(self, src_ids: list[list[int]], tgt_ids: list[list[int]]) -> Any:
        with torch.no_grad():
            return self.teacher_forced(src_ids, tgt_ids)

    def teacher_forced(self, src_ids: list[list[int]], tgt_ids: list[list[int]]) -> Any:
        """The model's output, every attention included, with the targets forced (start token first);
        gradients flow when enabled (``explain.translator_maps``'s grad)."""
        from ..data.arrays import pad_ids, source_arrays

        src, src_mask = source_arrays(src_ids, self.source_suffix, self.pad_id)
        tgt_in = pad_ids(tgt_ids, prefix=self.stepper.bos_id, pad=self.pad_id)  # (B, T)
        device = self.stepper.device
        return self.model(
            input_ids=torch.from_numpy(src).to(device),
            attention_mask=torch.from_numpy(src_mask).to(device).long(),
            decoder_input_ids=torch.from_numpy(tgt_in).to(device),
            output_attentions=True,
            return_dict=True,
        )

    returns_self_attention = True

    def self_attention(self, result: Any) -> dict[str, np.ndarray] | None:
        """{"encoder": (L, H, S, S), "decoder": (L, H, T, T)} of a translation (decoder rows: the steps)."""
        src_ids, tgt_ids = self.result_ids(result)
        out = self._teacher_forced([src_ids], [tgt_ids])
        stack = lambda maps: torch.stack([m[0] for m in maps]).float().cpu().numpy()  # noqa: E731
        return {"encoder": stack(out.encoder_attentions), "decoder": stack(out.decoder_attentions)}

    def _forced_maps(self, src_ids: list[list[int]], tgt_ids: list[list[int]], layers: bool) -> np.ndarray:
        """Teacher-forced cross-attention: (B, T, S) (the last layer's head mean), or (B, L, H, T, S)."""
        out = self._teacher_forced(src_ids, tgt_ids)
        maps = torch.stack(list(out.cross_attentions), 1).float()  # (B, L, H, T, S)
        if layers:
            return maps.cpu().numpy()
        return maps[:, self.default_layer].mean(1).cpu().numpy()
