"""DistributedDataParallel on PyTorch's engine: gloo on CPU, nccl on GPU; no-ops in one process.

``torchrun --nproc_per_node=N -m attnkit train CONFIG`` sets RANK/WORLD_SIZE; each rank takes a
shard of every global batch (see TokenBatcher), and gradients are averaged by DDP.
"""

from __future__ import annotations

import contextlib
import os

import torch
import torch.distributed as tdist
from torch import nn


def init_from_env(device: str = "auto") -> bool:
    """Initialise the process group when launched by torchrun. Returns True if distributed."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1 or tdist.is_initialized():
        return tdist.is_initialized()
    # nccl only when this run trains on CUDA (training.device), gloo on CPU even where CUDA exists
    on_cuda = torch.cuda.is_available() and not device.startswith("cpu")
    tdist.init_process_group("nccl" if on_cuda else "gloo")
    return True


def local_device(device: torch.device) -> torch.device:
    """Under torchrun on CUDA, rank r uses GPU LOCAL_RANK (one process per GPU)."""
    if device.type != "cuda" or not active() or device.index is not None:
        return device
    local = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    torch.cuda.set_device(local)
    return local


def active() -> bool:
    return tdist.is_available() and tdist.is_initialized()


def rank() -> int:
    return tdist.get_rank() if active() else 0


def world_size() -> int:
    return tdist.get_world_size() if active() else 1


def wrap(model: nn.Module, device: torch.device | None = None) -> nn.Module:
    if not active():
        return model
    ids = [device] if device is not None and device.type == "cuda" else None
    return nn.parallel.DistributedDataParallel(model, device_ids=ids)


def unwrap(model: nn.Module) -> nn.Module:
    """The model inside a DDP wrapper (or the model itself)."""
    inner = getattr(model, "module", model)
    return inner if isinstance(inner, nn.Module) else model


def all_reduce_sum(values: list[float]) -> list[float]:
    if not active():
        return values
    on_nccl = tdist.get_backend() == "nccl"
    device = torch.device("cuda", torch.cuda.current_device()) if on_nccl else torch.device("cpu")
    t = torch.tensor(values, dtype=torch.float64, device=device)
    tdist.all_reduce(t)
    return t.tolist()


def any_true(flag: bool) -> bool:
    """Agree across ranks (rank clocks differ), so all ranks stop at the same step."""
    return all_reduce_sum([float(flag)])[0] > 0


def barrier() -> None:
    if active():
        tdist.barrier()


def shutdown() -> None:
    """Wait for every rank, then leave: a rank that tore down its gloo connections while another was still
    writing its last checkpoint made that one abort (SIGABRT, seen once in a CI run of the DDP test)."""
    if active():
        with contextlib.suppress(RuntimeError):  # a rank already gone (Ctrl-C): nothing left to wait for
            tdist.barrier()
        tdist.destroy_process_group()
