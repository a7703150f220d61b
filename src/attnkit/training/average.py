"""Combining checkpoints: weight averaging within one run, and ensembles of separate runs.

Averaging: the mean of the weights of the last few checkpoints of one run.

A standard last step in NMT (Vaswani et al. 2017 average the last 5 or 20 checkpoints; fairseq's
``average_checkpoints.py``, Marian's exponential smoothing): the average sits nearer the centre of the
region the optimizer wanders in late in training and usually scores higher than any single checkpoint.
Whether it does here is decided on the dev set, like every other choice.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from ..checkpoint import Checkpoint, load_checkpoint, save_payload
from ..errors import UsageError
from ..models.build import architecture_differences

# What an averaged checkpoint keeps besides weights: enough to translate or classify, not to resume.
KEEP = (
    "attnkit_version",
    "config",
    "step",
    "tokenizer",
    "target_tokenizer",
    "target_ids",
    "vocabulary",
    "labels",
    "train_time",  # the run's accounting up to the last checkpoint (for training reports)
    "tokens_seen",
    "class_weights",
)
MUST_MATCH = ("tokenizer", "target_tokenizer", "target_ids", "vocabulary", "labels")


def _check_compatible(first: Checkpoint, other: Checkpoint, path: Path, first_path: Path) -> None:
    differ = architecture_differences(first.config.model, other.config.model)
    if differ:
        raise UsageError(f"{path}: model differs from {first_path}'s ({'; '.join(differ)}); average one run")
    for key in MUST_MATCH:
        if getattr(other, key) != getattr(first, key):
            raise UsageError(f"{path}: {key} differs from {first_path}'s; average checkpoints of one run")
    a, b = first.model, other.model
    if a.keys() != b.keys() or any(a[k].shape != b[k].shape for k in a):
        raise UsageError(f"{path}: weight names or shapes differ from {first_path}'s")


def average_checkpoints(paths: Sequence[str | Path], out: str | Path) -> dict[str, Any]:
    """Write the element-wise mean of the checkpoints' float weights to ``out`` (atomically).

    Integer buffers are taken from the last checkpoint; so are config, tokenizer and vocabularies,
    which must be equal in all. The result has no optimizer state: it is for inference, not ``--resume``.
    """
    if len(paths) < 2:
        raise UsageError(f"need at least 2 checkpoints to average, got {len(paths)}")
    files = [Path(p) for p in paths]
    first = load_checkpoint(files[0])
    sums = {k: v.double() for k, v in first.model.items() if v.is_floating_point()}
    last = first
    for path in files[1:]:
        last = load_checkpoint(path)
        _check_compatible(first, last, path, files[0])
        for key in sums:
            sums[key] += last.model[key].double()
    shared: dict[int, torch.Tensor] = {}  # tied weights (one storage, two names) stay tied
    weights = {
        k: shared.setdefault(v.data_ptr(), (sums[k] / len(files)).to(v.dtype) if k in sums else v.clone())
        for k, v in last.model.items()
    }
    averaged = _kept(last, model=weights, averaged_from=[str(p) for p in files])
    save_payload(averaged, out)
    return averaged.to_payload()


def _kept(ckpt: Checkpoint, **fields: Any) -> Checkpoint:
    """``ckpt``'s KEEP fields and its validation history, with ``fields`` set: no training state."""
    kept = {name: getattr(ckpt, name) for name in KEEP}
    return Checkpoint(**{**kept, "position": {"history": ckpt.history()}, **fields})


def ensemble_checkpoints(paths: Sequence[str | Path], out: str | Path) -> dict[str, Any]:
    """Write one classifier checkpoint holding several separately trained HANs (``HANEnsemble``).

    Members may differ in seed, size and class weighting but must share vocabulary and labels (the
    vocabulary is a function of the training data and ``data.min_freq``). Config and training history
    are the first member's; ``ensemble_of`` names every member.
    """
    if len(paths) < 2:
        raise UsageError(f"need at least 2 checkpoints for an ensemble, got {len(paths)}")
    files = [Path(p) for p in paths]
    members = [load_checkpoint(p) for p in files]
    first = members[0]
    for path, ckpt in zip(files, members):
        if ckpt.task != "classification" or ckpt.ensemble:
            raise UsageError(f"{path}: ensembles combine single classifiers (HAN checkpoints)")
        for key in ("vocabulary", "labels"):
            if getattr(ckpt, key) != getattr(first, key):
                raise UsageError(f"{path}: {key} differs from {files[0]}'s; members must share it")
    combined = _kept(
        first,
        model={f"members.{i}.{k}": v for i, ckpt in enumerate(members) for k, v in ckpt.model.items()},
        ensemble=[ckpt.config for ckpt in members],
        class_weights=_ensemble_class_weights(members),
        ensemble_of=[str(p) for p in files],
    )
    save_payload(combined, out)
    return combined.to_payload()


def _ensemble_class_weights(members: list[Checkpoint]) -> list[float] | None:
    """The members' training class weights, geometric mean (``training.prior``), if they all keep them."""
    if any(m.class_weights is None for m in members):
        return None
    from .prior import geometric_mean

    return geometric_mean([m.class_weights for m in members], len(members[0].labels or []))
