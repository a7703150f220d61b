"""The ALiBi families whose attention does not go through transformers' attention interface: Bloom and MPT.

Each layer's attention module gets a forward pre-hook (only while ``capture.capturing`` runs) that makes the
queries and keys the module is about to make from the same inputs (its own fused q/k/v projection, MPT's
clipping) and the per-key linear bias it adds (Bloom's ``alibi``: slope x position; MPT's
``position_bias``: slope x (position - T + 1), the same up to a constant per row, which softmax ignores),
and hands them to the recorder; the module then runs as it would. Shapes: queries and keys (1, H, T, d),
the bias (H, T).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch


def _bloom(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, float, Any]:
    hidden = kwargs["hidden_states"] if "hidden_states" in kwargs else args[0]
    alibi = kwargs["alibi"] if "alibi" in kwargs else args[2]
    query, key, _ = module._reshape(module.query_key_value(hidden))
    bias = alibi.view(hidden.shape[0], module.num_heads, -1)[0]
    return query, key, float(module.inv_norm_factor), bias


def _mpt(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, float, Any]:
    hidden = kwargs["hidden_states"] if "hidden_states" in kwargs else args[0]
    position_bias = kwargs["position_bias"] if "position_bias" in kwargs else args[1]
    batch, length = hidden.shape[:2]
    mixed = module.Wqkv(hidden)
    if module.clip_qkv:
        mixed = mixed.clamp(min=-module.clip_qkv, max=module.clip_qkv)
    query, key, _ = mixed.chunk(3, dim=2)
    shape = (batch, length, module.n_heads, module.head_dim)
    query, key = query.reshape(shape).transpose(1, 2), key.reshape(shape).transpose(1, 2)
    bias = position_bias[:, -1, max(0, position_bias.size(2) - length) :]
    return query, key, float(module.softmax_scale), bias


READERS: dict[str, Callable[..., tuple[Any, Any, float, Any]]] = {
    "BloomAttention": _bloom,
    "MptAttention": _mpt,
}


def reads(model: Any) -> bool:
    """Whether ``model`` has attention modules that this module reads."""
    return any(type(m).__name__ in READERS for m in model.modules())


def attach(model: Any, recorder: Any) -> list[Any]:
    """Pre-hooks on every ALiBi attention module of ``model`` feeding ``recorder.take``; their handles."""
    handles = []
    for module in model.modules():
        reader = READERS.get(type(module).__name__)
        if reader is None:
            continue

        def hook(mod: Any, args: tuple[Any, ...], kwargs: dict[str, Any], read: Any = reader) -> None:
            with torch.no_grad():
                query, key, scaling, bias = read(mod, args, kwargs)
            recorder.take(mod, query, key, scaling, {"bias": bias})

        handles.append(module.register_forward_pre_hook(hook, with_kwargs=True))
    return handles
