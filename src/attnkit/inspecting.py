"""``attnkit.inspect``: the attention of a decoder-only language model over a long text, in bounded memory.

One forward pass of the model's own (SDPA) attention over the text (and a continuation it generates, with
``generate``), read by ``hf.capture``: per layer the attention each token receives and per head its
entropy, distance, sink and previous-token shares, plus the rows asked for (``rows`` of ``heads`` in
``layers``). A second, short pass over an induction probe (a random token sequence repeated) scores each
head's prefix matching; ``explain.roles`` names each head's role from these numbers. Memory is O(T) per
layer beyond the model's own forward pass (``benchmarks/long_context.py``).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .errors import DataError, UsageError
from .log import log
from .results import Inspection

PROBE_PERIOD = 32


def parse_indices(spec: str | None, n: int, what: str, default: list[int]) -> list[int]:
    """Python-style indices and slices, comma-separated ("-64:", "0,5,10:20") -> sorted unique indices of
    0..n-1; an index out of range or a malformed part is one line naming the valid range."""
    if spec is None or not str(spec).strip():
        return default
    chosen: set[int] = set()
    for part in str(spec).split(","):
        part = part.strip()
        bounds = f"{what} must be in 0..{n - 1} (or -{n}..-1)"
        if re.fullmatch(r"-?\d+", part):
            index = int(part)
            if not -n <= index < n:
                raise UsageError(f"{what} {index} is out of range: {bounds}")
            chosen.add(index % n)
        elif re.fullmatch(r"(-?\d+)?:(-?\d+)?(:-?\d+)?", part):
            pieces = [int(p) if p else None for p in part.split(":")]
            if len(pieces) == 3 and pieces[2] == 0:
                raise UsageError(f"{what} {part!r}: a slice step cannot be 0")
            for end in pieces[:2]:
                if end is not None and not -n <= end <= n:
                    raise UsageError(f"{what} {part!r} is out of range: {bounds}")
            chosen.update(range(n)[slice(*pieces)])
        else:
            raise UsageError(f"{what} {part!r}: expected indices and slices such as 0,5,10:20 or -64:")
    if not chosen:
        raise UsageError(f"{what} {spec!r} selects nothing; {what} are 0..{n - 1}")
    return sorted(chosen)


def _positions(model: Any) -> int:
    config = model.config
    for name in ("max_position_embeddings", "n_positions", "max_sequence_length", "max_seq_len"):
        if getattr(config, name, None):
            return int(getattr(config, name))
    return 1 << 30


def load_lm(model: Any) -> Any:
    """A causal LM (``hf.causal.HFCausalLM``) from a name, folder or instance; other models get the command
    that fits them."""
    from .loading import resolve_reference

    if hasattr(model, "model") and getattr(model, "kind", "") == "causal":
        return model
    if model is not None and not isinstance(model, str | Path):
        kind = getattr(model, "kind", type(model).__name__)
        raise UsageError(f"attnkit inspect reads decoder-only language models; this is a {kind} model")
    ref = resolve_reference(model, "generation")
    if ref.task != "generation":
        fits = {
            "translation": "attnkit translate --layers / attnkit heads",
            "classification": "attnkit classify",
        }
        raise UsageError(
            f"{ref.name} is a {ref.task} model; attnkit inspect reads decoder-only language models "
            f"(for this one: {fits.get(ref.task, 'attnkit translate')})"
        )
    from .loading import instantiate

    return instantiate(ref)


def _token_ids(lm: Any, text: str, generate: int, max_tokens: int | None) -> tuple[list[int], int]:
    tokenizer = lm.tokenizer
    ids = list(tokenizer(text)["input_ids"])
    if not ids:
        raise DataError("the text has no tokens")
    if max_tokens is not None:
        if max_tokens < 1:
            raise UsageError(f"max_tokens must be at least 1, got {max_tokens}")
        if len(ids) > max_tokens:
            log.info(f"the text is {len(ids)} tokens; reading its first {max_tokens}")
            ids = ids[:max_tokens]
    prompt = len(ids)
    if generate > 0:
        ids = ids + lm.generate_from(ids, generate)
    limit = _positions(lm.model)
    if len(ids) > limit:
        raise UsageError(
            f"the text is {len(ids)} tokens (with the continuation); {lm.path or 'the model'} reads at most "
            f"{limit} positions: shorten it"
        )
    return ids, prompt


def _run(lm: Any, ids: list[int], plan: Any) -> Any:
    """One forward pass of the backbone (no logits: a (T, vocab) matrix is what a long text cannot afford)
    on the model's SDPA path, captured."""
    import torch

    from .hf.capture import capturing

    model = lm.model
    before = model.config._attn_implementation
    with contextlib.suppress(ValueError, ImportError, AttributeError):
        model.set_attn_implementation("sdpa")  # a family without SDPA keeps its own attention
    try:
        with capturing(model, plan) as recorder, torch.no_grad():
            model.base_model(input_ids=torch.tensor([ids], device=lm.device), use_cache=False)
    finally:
        model.set_attn_implementation(before)
    return recorder


def _probe(lm: Any) -> np.ndarray:
    """Each head's induction score (``explain.roles.induction_scores``) on a repeated random sequence."""
    from .explain.roles import induction_scores
    from .hf.capture import Plan

    tokenizer = lm.tokenizer
    special = set(tokenizer.all_special_ids)
    usable = [i for i in range(len(tokenizer)) if i not in special]
    period = min(PROBE_PERIOD, max(2, (_positions(lm.model) - 1) // 2))
    sequence = list(np.random.default_rng(0).choice(usable, period, replace=False))
    start = [tokenizer.bos_token_id] if tokenizer.bos_token_id is not None else []
    ids = [int(i) for i in start + sequence + sequence]
    heads = int(lm.model.config.num_attention_heads)
    layers = int(lm.model.config.num_hidden_layers)
    plan = Plan(layers=list(range(layers)), heads=list(range(heads)), rows=list(range(len(ids))))
    stats = _run(lm, ids, plan).stats
    full = np.stack([np.stack([s.rows[h] for h in range(heads)]) for s in stats])  # (L, H, T, T)
    return induction_scores(full, period, len(start))


def inspect(
    model: Any = None,
    text: str | None = None,
    *,
    file: str | Path | None = None,
    generate: int = 0,
    layers: str | None = None,
    heads: str | None = None,
    rows: str | None = None,
    probe: bool = True,
    maps: Sequence[str] = (),
    max_tokens: int | None = None,
) -> Inspection:
    """The attention of a causal LM (a name, folder or loaded model; None: the shipped one) over ``text``
    (or the UTF-8 ``file``), with ``generate`` new tokens appended greedily. ``layers``/``heads``/``rows``
    choose the rows kept (indices and slices as strings: "-64:", "0,5,10:20"); by default the last
    layer's heads for the last token (for the generated tokens with ``generate``). ``maps``: derived maps
    of the same rows (``hf.causal_maps``: rollout, grad); ``max_tokens``: read the text's first tokens."""
    from .explain.roles import head_roles
    from .hf.capture import Plan
    from .hf.causal_maps import MAPS, grad_rows, rollout_rows

    unknown = [m for m in maps if m not in MAPS]
    if unknown:
        raise UsageError(f"unknown map {unknown[0]!r}; for causal language models: {', '.join(MAPS)}")

    if (text is None) == (file is None):
        raise UsageError("give a text or a file (one of them)")
    if file is not None:
        from .files import read_text

        text = read_text(file)
    lm = load_lm(model)
    ids, prompt = _token_ids(lm, str(text), generate, max_tokens)
    config = lm.model.config
    n_layers, n_heads = int(config.num_hidden_layers), int(config.num_attention_heads)
    t = len(ids)
    default_rows = list(range(prompt - 1, t - 1)) if t > prompt else [t - 1]
    plan = Plan(
        layers=parse_indices(layers, n_layers, "layers", [n_layers - 1]),
        heads=parse_indices(heads, n_heads, "heads", list(range(n_heads))),
        rows=parse_indices(rows, t, "rows", default_rows),
        keep_qk="rollout" in maps,
    )
    derived = {"grad": grad_rows(lm, ids, plan.rows)} if "grad" in maps else {}  # before the long pass
    recorder = _run(lm, ids, plan)
    stats = recorder.stats
    if "rollout" in maps:
        derived["rollout"] = rollout_rows(recorder.qk, plan.rows, t)
    stack = lambda name: np.stack([getattr(s, name) for s in stats]).astype(np.float32)  # noqa: E731
    induction = _probe(lm) if probe else None
    return Inspection(
        model=str(lm.path or "model"),
        tokens=list(lm.tokenizer.convert_ids_to_tokens(ids)),
        ids=ids,
        prompt_tokens=prompt,
        kv_heads=int(getattr(config, "num_key_value_heads", None) or n_heads),
        received=stack("received"),
        entropy=stack("entropy"),
        distance=stack("distance"),
        sink=stack("sink"),
        previous=stack("previous"),
        induction=None if induction is None else induction.astype(np.float32),
        roles=head_roles(stack("entropy"), stack("distance"), stack("sink"), stack("previous"), t, induction),
        captured=[
            {"layer": layer, "head": h, "rows": plan.rows, "weights": stats[layer].rows[h]}
            for layer in plan.layers
            for h in plan.heads
        ],
        text=str(text),
        maps={name: {"rows": plan.rows, "weights": derived[name]} for name in maps},
    )
