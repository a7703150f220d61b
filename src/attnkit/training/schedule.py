"""Learning-rate schedules: constant, inverse square root, plateau or linear, each after a linear warmup.

``lr = base_lr * warmup_factor(step) * plateau_scale``: the plateau scale is multiplied by
``factor`` after ``patience`` validations without a new best metric. ``linear`` decays from
``base_lr`` at the end of warmup to 0 at ``total`` steps (``training.max_steps``): the lr reaches
zero when training stops, which suits fine-tuning and a fixed budget of updates.
"""

from __future__ import annotations

from typing import Any

from torch.optim import Optimizer

from ..errors import ConfigError


def warmup_factor(step: int, warmup: int, decay: bool) -> float:
    """Linear warmup to 1 over ``warmup`` steps, then ``sqrt(warmup / step)`` when ``decay``."""
    step = max(step, 1)
    if warmup <= 0:
        return 1.0
    if step < warmup:
        return step / warmup
    return (warmup / step) ** 0.5 if decay else 1.0


def linear_factor(step: int, warmup: int, total: int) -> float:
    """Linear warmup to 1 over ``warmup`` steps, then linear decay to 0 at ``total`` steps."""
    if step < warmup:
        return max(step, 1) / warmup
    return max(0.0, (total - step) / max(total - warmup, 1))


class Schedule:
    """Sets the optimizer's learning rate every step; ``validated`` feeds the plateau rule."""

    def __init__(
        self,
        optimizer: Optimizer,
        kind: str,
        warmup: int,
        factor: float = 0.5,
        patience: int = 2,
        total: int = 0,
    ):
        if kind == "linear" and total <= 0:
            raise ConfigError("the linear schedule needs the total number of steps (training.max_steps > 0)")
        self.optimizer, self.kind, self.warmup, self.total = optimizer, kind, warmup, total
        self.factor, self.patience = factor, patience
        self.base = [group["lr"] for group in optimizer.param_groups]
        self.steps, self.scale, self.best, self.bad = 0, 1.0, float("-inf"), 0
        self._apply()

    def _apply(self) -> None:
        if self.kind == "linear":
            f = linear_factor(self.steps + 1, self.warmup, self.total)
        else:
            f = warmup_factor(self.steps + 1, self.warmup, self.kind == "inverse_sqrt") * self.scale
        for group, base in zip(self.optimizer.param_groups, self.base):
            group["lr"] = base * f

    @property
    def lr(self) -> float:
        return float(self.optimizer.param_groups[0]["lr"])

    def step(self) -> None:
        self.steps += 1
        self._apply()

    def validated(self, metric: float) -> None:
        if self.kind != "plateau":
            return
        if metric > self.best:
            self.best, self.bad = metric, 0
            return
        self.bad += 1
        if self.bad > self.patience:
            self.scale *= self.factor
            self.bad = 0
            self._apply()

    def state_dict(self) -> dict[str, Any]:
        return {"steps": self.steps, "scale": self.scale, "best": self.best, "bad": self.bad}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.steps, self.scale, self.best, self.bad = (
            state["steps"],
            state["scale"],
            state["best"],
            state["bad"],
        )
        self._apply()
