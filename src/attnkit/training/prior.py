"""Prior correction: undo part of the class weighting a classifier was trained with, at decision time.

A model trained with class weights ``w`` (``training.class_weighting``) learns probabilities tilted
towards the up-weighted classes, roughly ``p_w(c) ∝ w_c p(c)``: good for macro-F1, at some cost in
accuracy. The decision rule ``argmax_c log p_w(c) - tau * log w_c`` moves between the two:
``tau = 0`` is the trained model as is, ``tau = 1`` divides the weights out (the accuracy-optimal rule if
the tilt were exact). This is post-hoc logit adjustment (Menon et al., "Long-tail learning via logit
adjustment", ICLR 2021) with the training weights as the adjustment. Probabilities shown to users are
the corrected ones, renormalised, so that they agree with the predicted label.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ..checkpoint import Checkpoint
from ..errors import UsageError
from ..results import check_tau, log_prior

__all__ = ["check_tau", "geometric_mean", "prior_bias", "stored_class_weights"]


def geometric_mean(weights: list[list[float] | None], num_classes: int) -> list[float]:
    """The class weights of an ensemble: the geometric mean of its members' (None = unweighted = 1s)."""
    logs = torch.stack([torch.tensor(w or [1.0] * num_classes).log() for w in weights])  # (M, C)
    return logs.mean(0).exp().tolist()


def stored_class_weights(ckpt: Checkpoint) -> list[float] | None:
    """The training loss's class weights a checkpoint keeps, or, for one trained before they were
    kept, recomputed from its config and training data (None when those are not readable)."""
    num_classes = len(ckpt.labels or [])
    if ckpt.class_weights is not None:
        return ckpt.class_weights or [1.0] * num_classes
    from .classification import class_weights, training_labels

    labels = training_labels(ckpt.config, list(ckpt.labels or []))
    if labels is None:
        return None
    kinds = [m.training.class_weighting for m in ckpt.ensemble or [ckpt.config]]
    members = [class_weights(labels, num_classes, kind) for kind in kinds]
    return geometric_mean([None if w is None else w.tolist() for w in members], num_classes)


def prior_bias(ckpt: Checkpoint, tau: float | None = None) -> Tensor | None:
    """``tau * log w`` (C,) to subtract from a classifier's logits, or None when there is nothing to do.

    ``tau``: None = the checkpoint's own ``prior_correction`` (0 when it has none)."""
    tau = check_tau((ckpt.prior_correction or 0.0) if tau is None else tau)
    if tau == 0.0:
        return None
    weights = stored_class_weights(ckpt)
    if weights is None:
        raise UsageError(
            "this classifier does not keep its training class weights and its training data is not "
            "readable here: prior correction needs one of the two (use --prior-correction 0)"
        )
    bias = log_prior(weights, tau)
    return None if bias is None else torch.from_numpy(bias)
