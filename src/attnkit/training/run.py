"""``attnkit.train``: the Python training API that ``attnkit train`` only calls.

from attnkit import train
from attnkit.config import load_config
reason = train(load_config("configs/toy-copy.yaml", ["training.max_steps=100"]))  # 'max_steps'
train(config, resume=True)  # continue exactly from the last checkpoint in training.out_dir
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import torch

from ..checkpoint import Checkpoint, latest_checkpoint, load_checkpoint
from ..config import ExperimentConfig
from ..errors import UsageError
from ..log import log
from ..models.build import build_model, init_checkpoint, restore
from . import distributed as dist
from .trainer import Trainer


def _log(message: str) -> None:
    log.info(message)


def make_task(config: ExperimentConfig, checkpoint: Checkpoint | None) -> Any:
    """The trainer of ``config.task`` (``tasks.TABLE``); vocabularies from ``checkpoint`` if given."""
    from ..names import resolve
    from ..tasks import TABLE

    return resolve(TABLE[config.task].trainer).for_run(config, checkpoint, _log)


def run_files(out_dir: Path) -> list[Path]:
    """The files a training run leaves in its folder: checkpoints and the validation log."""
    if not out_dir.is_dir():
        return []
    return sorted([*out_dir.glob("*.pt"), *out_dir.glob("validations.csv")])


def check_out_dir(out_dir: Path, resume: bool, overwrite: bool) -> None:
    """Refuse to start a new run over an earlier one unless ``overwrite`` (whose files are then removed):
    its best.pt and validation log would otherwise be replaced or mixed with the new run's."""
    found = run_files(out_dir)
    if resume or not found:
        return
    if not overwrite:
        raise UsageError(
            f"{out_dir} already holds a run ({len(found)} files, e.g. {found[0].name}): continue it with "
            "--resume, start over with --overwrite, or set training.out_dir to a new folder"
        )
    for path in found:
        path.unlink()


def train(
    config: ExperimentConfig, resume: bool = False, started: float | None = None, overwrite: bool = False
) -> str:
    """Train ``config`` until a stop condition; returns why it stopped ('budget', 'max_steps',
    'epochs', 'validated' (patience), 'interrupted'). ``resume``: continue from the last checkpoint of
    ``training.out_dir`` (exact: optimizer, schedule, RNG, data position); otherwise ``training.init_from``
    may name weights to start from. Checkpoints go to ``training.out_dir``; a folder that already holds
    a run needs ``resume`` or ``overwrite``."""
    started = time.time() if started is None else started
    torch.set_num_threads(config.training.threads)
    torch.manual_seed(config.training.seed)
    dist.init_from_env(config.training.device)
    out_dir = config.training.out_dir
    check_out_dir(Path(out_dir), resume, overwrite)
    previous = latest_checkpoint(Path(out_dir)) if resume else None
    if resume and previous is None:
        raise UsageError(f"--resume: no checkpoint in {out_dir}")
    initial = init_checkpoint(config) if previous is None and config.training.init_from else None
    task = make_task(config, load_checkpoint(previous) if previous else initial)
    model = build_model(
        config.model,
        task.vocab_size,
        num_classes=getattr(task, "num_classes", 5),
        target_ids=getattr(task, "target_ids", None),
        src_vocab_size=getattr(task, "src_vocab_size", None),
    )
    if initial is not None:
        restore(model, initial)
    elif previous is None and hasattr(task, "pretrain"):
        task.pretrain(model, log=_log)
    trainer = Trainer(config, model, task, started=started)
    if previous is not None:
        trainer.resume(previous)
    n_params = sum(p.numel() for p in model.parameters())
    trainer.log(f"{config.name}: {config.model.name} model, {n_params:,} parameters, out_dir {out_dir}")
    if initial is not None:
        trainer.log(f"weights from {config.training.init_from} (step {initial.step})")
    try:
        return trainer.train()
    finally:
        dist.shutdown()
