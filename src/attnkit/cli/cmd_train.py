"""``attnkit train CONFIG [--set key=value ...] [--resume]``."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any


def add_parser(sub: Any, name: str) -> None:
    p = sub.add_parser(name, help="train a model from a YAML config")
    p.add_argument("config", help="YAML experiment file (see configs/)")
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config field, e.g. --set training.max_minutes=25",
    )
    p.add_argument("--resume", action="store_true", help="continue from the last checkpoint in out_dir")
    p.add_argument(
        "--skip-bad-lines",
        action="store_true",
        help="skip malformed data lines with one counted warning instead of stopping",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    started = time.time()
    import torch

    from ..checkpoint import latest_checkpoint, load_checkpoint
    from ..config import load_config
    from ..models import build_model
    from ..models.build import init_checkpoint, restore
    from ..training import distributed as dist
    from ..training.trainer import Trainer

    config = load_config(
        args.config, args.overrides + (["data.skip_bad_lines=true"] if args.skip_bad_lines else [])
    )
    torch.set_num_threads(config.training.threads)
    torch.manual_seed(config.training.seed)
    dist.init_from_env(config.training.device)
    out_dir = config.training.out_dir
    previous = latest_checkpoint(Path(out_dir)) if args.resume else None
    if args.resume and previous is None:
        raise ValueError(f"--resume: no checkpoint in {out_dir}")
    # --resume continues a run; otherwise training.init_from starts from another run's weights
    initial = init_checkpoint(config) if previous is None and config.training.init_from else None
    task = _make_task(config, load_checkpoint(previous) if previous else initial)
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
        task.pretrain(model, log=lambda m: print(f"[attnkit] {m}", flush=True))
    trainer = Trainer(config, model, task, started=started)
    if previous is not None:
        trainer.resume(previous)
    n_params = sum(p.numel() for p in model.parameters())
    trainer.log(f"{config.name}: {config.model.name} model, {n_params:,} parameters, out_dir {out_dir}")
    if initial is not None:
        trainer.log(f"weights from {config.training.init_from} (step {initial.get('step', '?')})")
    reason = trainer.train()
    dist.shutdown()
    return 130 if reason == "interrupted" else 0


def _make_task(config: Any, checkpoint: dict[str, Any] | None) -> Any:
    if config.task == "classification":
        from ..training.classification import ClassificationTask

        return ClassificationTask(config, checkpoint)
    from ..data.tokenizer import vocabularies_from
    from ..training.translation import TranslationTask

    def log(message: str) -> None:
        print(f"[attnkit] {message}", flush=True)

    if checkpoint is None:
        return TranslationTask(config, log=log)
    source, target = vocabularies_from(checkpoint)
    return TranslationTask(config, source, checkpoint["target_ids"], log=log, target_tokenizer=target)
