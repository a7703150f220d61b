"""DistributedDataParallel on PyTorch's engine: gloo on CPU, nccl on GPU; no-ops in one process.

``torchrun --nproc_per_node=N -m attnkit train CONFIG`` sets RANK/WORLD_SIZE; each rank takes a
shard of every global batch (see TokenBatcher), and gradients are averaged by DDP.
"""

from __future__ import annotations

import os

import torch
import torch.distributed as tdist
from torch import nn


def init_from_env() -> bool:
    """Initialise the process group when launched by torchrun. Returns True if distributed."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1 or tdist.is_initialized():
        return tdist.is_initialized()
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    tdist.init_process_group(backend)
    return True


def active() -> bool:
    return tdist.is_available() and tdist.is_initialized()


def rank() -> int:
    return tdist.get_rank() if active() else 0


def world_size() -> int:
    return tdist.get_world_size() if active() else 1


def wrap(model: nn.Module) -> nn.Module:
    return nn.parallel.DistributedDataParallel(model) if active() else model


def unwrap(model: nn.Module) -> nn.Module:
    """The model inside a DDP wrapper (or the model itself)."""
    inner = getattr(model, "module", model)
    return inner if isinstance(inner, nn.Module) else model


def all_reduce_sum(values: list[float]) -> list[float]:
    if not active():
        return values
    t = torch.tensor(values, dtype=torch.float64)
    tdist.all_reduce(t)
    return t.tolist()


def any_true(flag: bool) -> bool:
    """Agree across ranks (rank clocks differ), so all ranks stop at the same step."""
    return all_reduce_sum([float(flag)])[0] > 0


def barrier() -> None:
    if active():
        tdist.barrier()


def shutdown() -> None:
    if active():
        tdist.destroy_process_group()
