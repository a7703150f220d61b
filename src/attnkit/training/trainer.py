"""The training loop, shared by translation and classification through a small Task interface.

One loop: batches -> loss -> backward (accumulated) -> clip -> AdamW step -> schedule, with
validation, atomic checkpoints, a CSV log of every validation, early stopping, a wall-clock budget,
Ctrl-C that saves and exits cleanly, ``--resume`` and DistributedDataParallel.
"""

from __future__ import annotations

import csv
import math
import signal
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import torch
from torch import Tensor, nn
from tqdm import tqdm

from ..checkpoint import CheckpointError, latest_checkpoint, load_checkpoint, save_checkpoint, save_payload
from ..config import ExperimentConfig, to_dict
from ..device import autocast, resolve_device, to_device
from ..log import log, quiet
from ..version import __version__
from . import distributed as dist
from .rng import rng_state, set_rng_state
from .schedule import Schedule


class Task(Protocol):
    """What the loop needs from a task (translation, classification)."""

    def batches(self, epoch: int, start: int, rank: int, world_size: int) -> Iterator[Any]: ...
    def loss(self, model: nn.Module, batch: Any) -> tuple[Tensor, int, int]:
        """-> (summed loss, units it is summed over (tokens or documents), tokens processed)."""
        ...

    def validate(self, model: nn.Module) -> dict[str, float]:
        """Dev metrics; key 'score' (higher is better) picks the best checkpoint."""
        ...

    def payload(self) -> dict[str, Any]:
        """What a checkpoint needs besides weights to be usable alone (tokenizer, vocabulary)."""
        ...


@dataclass
class Position:
    epoch: int = 0
    batch: int = 0
    step: int = 0
    best: float = float("-inf")
    bad_validations: int = 0
    history: list[dict[str, float]] = field(default_factory=list)


class Trainer:
    def __init__(self, config: ExperimentConfig, model: nn.Module, task: Task, started: float | None = None):
        self.config, self.task, self.cfg = config, task, config.training
        self.out_dir = Path(self.cfg.out_dir)
        self.started = started if started is not None else time.time()
        self.rank, self.world = dist.rank(), dist.world_size()
        self.device = dist.local_device(resolve_device(self.cfg.device))
        if self.device.type == "cuda":
            torch.backends.cuda.matmul.allow_tf32 = True
            torch.backends.cudnn.allow_tf32 = True
        self.model = model.to(self.device)
        self.wrapped = dist.wrap(self.model, self.device)
        decay = [p for n, p in model.named_parameters() if p.dim() > 1]
        other = [p for n, p in model.named_parameters() if p.dim() <= 1]
        self.optimizer = torch.optim.AdamW(
            [
                {"params": decay, "weight_decay": self.cfg.weight_decay},
                {"params": other, "weight_decay": 0.0},
            ],
            lr=self.cfg.lr,
            betas=(self.cfg.betas[0], self.cfg.betas[1]),
        )
        self.schedule = Schedule(
            self.optimizer,
            self.cfg.schedule,
            self.cfg.warmup_steps,
            self.cfg.plateau_factor,
            self.cfg.plateau_patience,
            self.cfg.max_steps,
        )
        self.pos = Position()
        self.stop_requested = False
        self.tokens_seen, self.train_time = 0, 0.0
        self._pending = [0.0, 0.0]  # summed loss, units, over the micro-batches of one update
        self.last_loss = math.nan
        self._snapshots: set[float] = set()

    # 1. resume -------------------------------------------------------------------------------
    def resume(self, path: Path | None = None) -> bool:
        path = path or latest_checkpoint(self.out_dir)
        if path is None:
            return False
        ckpt = load_checkpoint(path)
        if ckpt.optimizer is None or ckpt.schedule is None or ckpt.rng is None or ckpt.position is None:
            raise CheckpointError(f"{path}: no training state to resume from (an inference checkpoint)")
        self.model.load_state_dict(ckpt.model)  # copies into the parameters, on their device
        self.optimizer.load_state_dict(ckpt.optimizer)
        self.schedule.load_state_dict(ckpt.schedule)
        set_rng_state(ckpt.rng)
        self.pos = Position(**ckpt.position)
        self.tokens_seen, self.train_time = ckpt.tokens_seen or 0, ckpt.train_time or 0.0
        self.log(
            f"resumed from {path} at epoch {self.pos.epoch}, batch {self.pos.batch}, step {self.pos.step}"
        )
        return True

    # 2. the loop -----------------------------------------------------------------------------
    def train(self) -> str:
        """Train until a stop condition; returns why it stopped (e.g. 'budget', 'interrupted')."""
        previous = signal.signal(signal.SIGINT, self._on_interrupt) if self.rank == 0 else None
        bar = tqdm(
            total=self.cfg.max_steps or None,
            initial=self.pos.step,
            disable=not self.cfg.progress or bool(self.rank) or quiet(),
            unit="step",
            dynamic_ncols=True,
            file=sys.stderr,
        )
        try:
            reason = self._loop(bar)
        finally:
            bar.close()
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
        if reason in ("budget", "max_steps", "epochs"):
            self.checkpoint(self.validate())
        self.log(f"stopped: {reason} at step {self.pos.step}; best dev score {self.pos.best:.2f}")
        return reason

    def _loop(self, bar: tqdm) -> str:
        while self.pos.epoch < self.cfg.max_epochs:
            for batch in self.task.batches(self.pos.epoch, self.pos.batch, self.rank, self.world):
                self._accumulate(batch)
                self.pos.batch += 1
                if self.pos.batch % self.cfg.accumulate == 0:
                    self._update(bar)
                    reason = self._after_update()
                    if reason:
                        return reason
            self.pos.epoch, self.pos.batch = self.pos.epoch + 1, 0
        return "epochs"

    def _accumulate(self, batch: Any) -> None:
        t0 = time.time()
        self.wrapped.train()
        batch = to_device(batch, self.device)
        with autocast(self.device, self.cfg.precision):
            loss, units, tokens = self.task.loss(self.wrapped, batch)
        loss.backward()
        self._pending[0] += float(loss.detach())
        self._pending[1] += units
        self.tokens_seen += tokens
        self.train_time += time.time() - t0

    def _update(self, bar: tqdm) -> None:
        t0 = time.time()
        loss_sum, units = dist.all_reduce_sum([self._pending[0], self._pending[1]])
        # Gradients hold sum-of-losses (DDP averages them over ranks): rescale to the global mean.
        scale = self.world / max(units, 1.0)
        for p in self.model.parameters():
            if p.grad is not None:
                p.grad.mul_(scale)
        if self.cfg.clip_grad_norm > 0:
            nn.utils.clip_grad_norm_(self.model.parameters(), self.cfg.clip_grad_norm)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.schedule.step()
        self.pos.step += 1
        self._pending = [0.0, 0.0]
        self.train_time += time.time() - t0
        self.last_loss = loss_sum / max(units, 1.0)
        bar.update(1)
        if bar.disable and self.rank == 0 and self.pos.step % self.cfg.log_every == 0:  # no bar: a line
            self.log(
                f"step {self.pos.step} loss {self.last_loss:.3f} tokens/s {self.tokens_per_second():.0f} "
                f"lr {self.schedule.lr:.2e} epoch {self.pos.epoch}"
            )
        if self.pos.step % 10 == 0:
            left = self.cfg.max_minutes - (time.time() - self.started) / 60 if self.cfg.max_minutes else 0.0
            eta = {"eta": f"{left:.1f}min"} if left > 0 else {}  # the wall-clock budget left
            bar.set_postfix(
                loss=f"{self.last_loss:.3f}",
                tok_s=f"{self.tokens_per_second():.0f}",
                lr=f"{self.schedule.lr:.2e}",
                epoch=self.pos.epoch,
                **eta,
                refresh=False,
            )

    def _after_update(self) -> str:
        if self.stop_requested:
            self.checkpoint(None)
            return "interrupted"
        elapsed = (time.time() - self.started) / 60
        if dist.any_true(self.cfg.max_minutes > 0 and elapsed > self.cfg.max_minutes):
            return "budget"
        self._snapshot(elapsed)
        if self.cfg.max_steps and self.pos.step >= self.cfg.max_steps:
            return "max_steps"
        if self.cfg.validate_every and self.pos.step % self.cfg.validate_every == 0:
            self.checkpoint(self.validate())
            return "validated" if dist.any_true(self._patience_exhausted()) else ""
        if self.cfg.checkpoint_every and self.pos.step % self.cfg.checkpoint_every == 0:
            self.checkpoint(None)
        return ""

    def _snapshot(self, elapsed: float) -> None:
        """Keep ``minutes-M.pt`` once M minutes have passed: equal-budget comparisons from one run."""
        due = [m for m in self.cfg.snapshot_minutes if m <= elapsed and m not in self._snapshots]
        if dist.any_true(bool(due)) and self.rank == 0:
            minutes = due[0] if due else elapsed
            self.out_dir.mkdir(parents=True, exist_ok=True)
            save_payload(self.payload(), self.out_dir / f"minutes-{minutes:g}.pt")
            self.log(f"snapshot after {minutes:g} minutes at step {self.pos.step}")
        self._snapshots.update(due)

    def _patience_exhausted(self) -> bool:
        return bool(self.cfg.patience) and self.pos.bad_validations >= self.cfg.patience

    def tokens_per_second(self) -> float:
        return self.tokens_seen * self.world / max(self.train_time, 1e-9)

    # 3. validation and checkpoints -----------------------------------------------------------
    def validate(self) -> dict[str, float]:
        if self.rank:
            dist.barrier()
            return {}
        self.model.eval()
        metrics = self.task.validate(self.model)
        metrics.update(
            step=self.pos.step,
            epoch=self.pos.epoch,
            lr=self.schedule.lr,
            train_loss=round(self.last_loss, 4),
            tokens_per_second=round(self.tokens_per_second(), 1),
            elapsed_minutes=round((time.time() - self.started) / 60, 2),
        )
        self.schedule.validated(metrics["score"])
        self._write_log(metrics)
        self.log("validation " + " ".join(f"{k}={v}" for k, v in metrics.items()))
        dist.barrier()
        return metrics

    def checkpoint(self, metrics: dict[str, float] | None) -> None:
        """Save (rank 0 only); a validation's metrics decide whether it is the new best."""
        if metrics and "score" in metrics:
            is_best = metrics["score"] > self.pos.best
            self.pos.best = max(self.pos.best, metrics["score"])
            self.pos.bad_validations = 0 if is_best else self.pos.bad_validations + 1
            self.pos.history.append(metrics)
        else:
            is_best = not (self.out_dir / "best.pt").exists()
        if self.rank == 0:
            save_checkpoint(self.out_dir, self.payload(), self.cfg.keep_last, is_best)

    def payload(self) -> dict[str, Any]:
        return {
            "attnkit_version": __version__,
            "config": to_dict(self.config),
            "step": self.pos.step,
            "model": to_device(self.model.state_dict(), "cpu"),  # device-independent
            "optimizer": to_device(self.optimizer.state_dict(), "cpu"),
            "schedule": self.schedule.state_dict(),
            "rng": rng_state(),
            "position": vars(self.pos).copy(),
            "tokens_seen": self.tokens_seen,
            "train_time": self.train_time,
            "provenance": self.provenance(),
            **self.task.payload(),
        }

    def provenance(self) -> dict[str, Any]:
        """Where and how this run trained: hardware, threads or GPU, world size, precision, versions."""
        if self.device.type == "cuda":
            hardware = f"{torch.cuda.get_device_name(self.device)} x{self.world}"
        else:
            hardware = f"{_cpu_model()}, {torch.get_num_threads()} threads x{self.world} processes"
        return {
            "hardware": hardware,
            "device": self.device.type,
            "precision": self.cfg.precision if self.device.type == "cuda" else "fp32",
            "torch": str(torch.__version__),
            "attnkit": __version__,
            "wall_minutes": round((time.time() - self.started) / 60, 2),
        }

    def _write_log(self, metrics: dict[str, float]) -> None:
        path = self.out_dir / "validations.csv"
        self.out_dir.mkdir(parents=True, exist_ok=True)
        new = not path.exists()
        with path.open("a", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(metrics))
            if new:
                writer.writeheader()
            writer.writerow(metrics)

    def _on_interrupt(self, signum: int, frame: Any) -> None:
        if self.stop_requested:  # a second Ctrl-C stops at once
            raise KeyboardInterrupt
        self.stop_requested = True
        self.log("Ctrl-C: saving a checkpoint after this step (press again to abort)")

    def log(self, message: str) -> None:
        if self.rank == 0:
            log.info(message)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or "CPU"
