"""Devices: ``auto`` (CUDA when present), ``cpu``, ``cuda`` or ``cuda:N``; moving nested batches.

This module sits at the bottom layer: the trainer, decoding and inference all ask it, so the same
code runs on a CPU and on a GPU.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

import torch

from .errors import DeviceError

T = TypeVar("T")


def resolve_device(name: str | torch.device | None = "auto") -> torch.device:
    """``auto`` -> cuda when available, else cpu; ``cuda[:N]`` is checked to exist."""
    if isinstance(name, torch.device):
        return name
    name = (name or "auto").strip().lower()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise DeviceError(f"unknown device {name!r}; valid: auto, cpu, cuda, cuda:N") from None
    if device.type not in ("cpu", "cuda"):
        raise DeviceError(f"unknown device {name!r}; valid: auto, cpu, cuda, cuda:N")
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise DeviceError(f"device {name!r}: this machine has no CUDA GPU (use --device cpu or auto)")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise DeviceError(f"device {name!r}: only {torch.cuda.device_count()} CUDA device(s) here")
    return device


def to_device(obj: T, device: torch.device | str, _memo: dict[Any, Any] | None = None) -> T:
    """Move every tensor inside ``obj`` (tensors, dataclasses, lists, tuples, dicts) to ``device``.

    Tensors that were one tensor (tied weights under two names) stay one tensor."""
    memo = {} if _memo is None else _memo
    if isinstance(obj, torch.Tensor):
        key = (
            obj.untyped_storage().data_ptr(),
            obj.storage_offset(),
            tuple(obj.shape),
            obj.stride(),
            obj.dtype,
        )
        if key not in memo:
            memo[key] = obj.to(device, non_blocking=True)
        return memo[key]  # type: ignore[no-any-return]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {f.name: to_device(getattr(obj, f.name), device, memo) for f in dataclasses.fields(obj)}
        return dataclasses.replace(obj, **changes)  # type: ignore[return-value]
    if isinstance(obj, dict):
        return type(obj)((k, to_device(v, device, memo)) for k, v in obj.items())  # type: ignore[return-value]
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_device(v, device, memo) for v in obj)  # type: ignore[return-value]
    return obj


def model_device(model: torch.nn.Module) -> torch.device:
    """The device of a model's first parameter (cpu for a model without parameters)."""
    for p in model.parameters():
        return p.device
    return torch.device("cpu")


def autocast(device: torch.device, precision: str) -> Any:
    """bf16 autocast on CUDA when ``precision == 'bf16'``; a no-op context otherwise."""
    enabled = precision == "bf16" and device.type == "cuda"
    return torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=enabled)
