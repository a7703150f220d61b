"""Adapt a translator to the bitext it is about to align, as statistical aligners do.

fast_align, GIZA++ and eflomal estimate their parameters on the very sentences they align. A translator
trained on other text has never seen their words and sentence shapes; a few hundred updates on the bitext
itself (as plain parallel text: no gold link is read) make its attention an aligner's: on the Hansards
test set, the shipped ``enfr-rnn`` + ``fren-rnn`` go from AER 0.343 to 0.128 after 200 steps and 0.108
after 800 (the trial set's choice among 200-800)
(``scripts/align_adapt.py``, docs/experiments/trust.md).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path

from ..checkpoint import latest_checkpoint
from ..config import ExperimentConfig, from_dict, to_dict
from ..errors import UsageError
from ..models.build import load_for_inference
from ..pretrained import resolve
from .run import train


def adaptation_config(
    model: str | Path | None,
    train_files: Sequence[str | Path],
    steps: int,
    out_dir: str | Path,
    lr: float = 3e-4,
    dev_files: Sequence[str | Path] | None = None,
    checkpoint_every: int = 0,
) -> ExperimentConfig:
    """The recipe of the translator ``model`` (a checkpoint or shipped name), set to fine-tune from its
    weights on ``train_files`` (source, target) for ``steps`` updates at a constant ``lr``, writing to
    ``out_dir``; validation (loss only) on ``dev_files`` (default: the training pair) at the end, and a
    checkpoint every ``checkpoint_every`` steps when > 0 (all of them kept)."""
    if steps < 1:
        raise UsageError(f"--adapt: the number of fine-tuning steps must be >= 1, got {steps}")
    path = resolve(model, "translation")
    _, recipe = load_for_inference(path, "translation")
    config = from_dict(ExperimentConfig, to_dict(recipe))
    config.data.train = [str(f) for f in train_files]
    config.data.dev = [str(f) for f in (dev_files or train_files)]
    config.data.train_limit = 0
    t = config.training
    t.out_dir, t.init_from, t.lr, t.schedule, t.warmup_steps = str(out_dir), str(path), lr, "constant", 0
    t.max_steps, t.max_minutes, t.max_epochs, t.validate_every = steps, 0.0, 1_000_000, steps
    t.checkpoint_every, t.validate_bleu, t.dev_limit, t.patience = checkpoint_every, False, 64, 0
    t.keep_last = 1 if checkpoint_every <= 0 else steps // checkpoint_every + 1
    t.snapshot_minutes, t.progress, t.seed = [], True, 1  # a bar: --adapt can run for minutes
    return config


def adapt_translator(
    model: str | Path | None,
    sources: Sequence[str],
    targets: Sequence[str],
    steps: int,
    out_dir: str | Path,
    lr: float = 3e-4,
    device: str = "cpu",
) -> Path:
    """Fine-tune the translator ``model`` (a checkpoint or shipped name; None = the default) on the
    pairs (sources[i], targets[i]) for ``steps`` updates, with its own recipe at a constant ``lr``,
    and return the checkpoint written to ``out_dir`` (trained on ``device``). Training logs and a
    progress bar (off with ``--quiet``) go to stderr."""
    if len(sources) != len(targets) or not sources:
        raise UsageError(f"--adapt needs aligned sentence pairs, got {len(sources)} and {len(targets)} lines")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = [out / "bitext.src", out / "bitext.tgt"]
    config = adaptation_config(model, files, steps, out / "run", lr)
    config.training.device = device
    for file, lines in zip(files, (sources, targets)):
        file.write_text("\n".join(line.strip() for line in lines) + "\n", encoding="utf-8")
    with contextlib.redirect_stdout(sys.stderr):
        reason = train(config)
    if reason == "interrupted":  # Ctrl-C: the fine-tuning did not finish, so nothing is aligned with it
        raise KeyboardInterrupt
    final = latest_checkpoint(out / "run")
    if final is None:  # train() always checkpoints at max_steps; guard against a silent no-op
        raise RuntimeError(f"--adapt: training wrote no checkpoint to {out / 'run'}")
    return final


def save_weights(checkpoint: str | Path, path: str | Path) -> None:
    """An adapted checkpoint as inference needs it (no optimizer state; float32 weights, so links read
    from the copy are the ones the run made)."""
    from ..checkpoint import inference_payload, load_checkpoint, save_payload

    save_payload(inference_payload(load_checkpoint(checkpoint), fp16=False), path)
