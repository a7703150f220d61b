"""Cross-field and range checks of an experiment, with messages that name the field and what is valid."""

from __future__ import annotations

from typing import Any

from ..errors import ConfigError
from ..names import MODEL_TASKS, TASKS
from .schema import ExperimentConfig, TrainingConfig


def validate(config: ExperimentConfig) -> None:
    """Cross-field checks with messages that say what is valid; the model's options check themselves."""
    t = config.training
    choices = {
        "task": (config.task, TASKS),
        "data.vocabulary": (config.data.vocabulary, ("joint", "separate")),
        "training.precision": (t.precision, ("bf16", "fp32")),
        "training.schedule": (t.schedule, ("constant", "inverse_sqrt", "linear", "plateau")),
        "training.pretrained_vectors": (t.pretrained_vectors, ("none", "wordllama")),
        "training.class_weighting": (
            t.class_weighting,
            ("inverse", "none", "quarter_inverse", "sqrt_inverse"),
        ),
    }
    for key, (value, valid) in choices.items():
        if value not in valid:
            raise ConfigError(f"{key}: unknown value {value!r}; valid: {', '.join(valid)}")
    if MODEL_TASKS[config.model.name] != config.task:
        fits = ", ".join(n for n, t in MODEL_TASKS.items() if t == config.task)
        raise ConfigError(f"model.name: {config.model.name!r} is not a {config.task} model; valid: {fits}")
    config.model.options.validate(f"model.{config.model.section}.")
    if not 0.0 <= config.data.subword_alpha <= 1.0:
        raise ConfigError(f"data.subword_alpha must be in [0, 1] (0 = off), got {config.data.subword_alpha}")
    if t.schedule == "linear" and t.max_steps <= 0:
        raise ConfigError("training.schedule linear decays to 0 at training.max_steps: set max_steps > 0")
    _check_vectors(t)
    _check_ranges(config)
    if config.data.train and len(config.data.train) not in (1, 2):
        raise ConfigError("data.train must be [tsv] or [src, tgt]")
    if t.backbone_weights and not getattr(config.model.options, "backbone", ""):
        raise ConfigError("training.backbone_weights needs model.captioner.backbone (resnet18 or resnet34)")


def _check_vectors(t: TrainingConfig) -> None:
    """The HAN's initial word vectors: at most one source."""
    if t.word2vec_epochs < 0:
        raise ConfigError(f"training.word2vec_epochs must be >= 0 (0 = off), got {t.word2vec_epochs}")
    if t.word2vec_epochs and t.word2vec_vectors:
        raise ConfigError("set training.word2vec_epochs (train) or word2vec_vectors (reuse), not both")
    if t.pretrained_vectors != "none" and (t.word2vec_epochs or t.word2vec_vectors):
        raise ConfigError("set training.pretrained_vectors or word2vec_epochs / word2vec_vectors, not both")


# Fields that must be positive (> 0) or non-negative (>= 0); checked where the config is read, so a typo
# is one line naming the field instead of torch's words from deep inside a model.
POSITIVE = [
    "data.vocab_size",
    "data.max_tokens",
    "data.max_len",
    "data.images_per_epoch",
    "data.dev_images",
    "data.batch_images",
    "training.threads",
    "training.accumulate",
    "training.max_epochs",
    "training.keep_last",
    "training.log_every",
    "data.min_freq",
]
NON_NEGATIVE = [
    "training.lr",  # 0 freezes the weights: a test of init_from uses it
    "data.train_limit",
    "training.weight_decay",
    "training.warmup_steps",
    "training.max_steps",
    "training.max_minutes",
    "training.validate_every",
    "training.checkpoint_every",
    "training.dev_limit",
    "training.patience",
    "training.clip_grad_norm",
    "training.plateau_patience",
    "training.attention_penalty",
    "training.reinforce_weight",
    "training.entropy_weight",
]
FRACTIONS = ["training.label_smoothing"]


def _field(config: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        config = getattr(config, part)
    return config


def _non_finite(node: Any, where: str) -> str | None:
    """The dotted name of the first float field that is NaN or infinite (YAML's .nan, .inf, -.inf)."""
    import dataclasses
    import math

    if isinstance(node, float):
        return where if not math.isfinite(node) else None
    if isinstance(node, (list, tuple)):
        return next((f for i, v in enumerate(node) if (f := _non_finite(v, f"{where}[{i}]"))), None)
    if dataclasses.is_dataclass(node):
        for item in dataclasses.fields(node):
            found = _non_finite(getattr(node, item.name), f"{where}.{item.name}".lstrip("."))
            if found:
                return found
    return None


def _check_ranges(config: ExperimentConfig) -> None:
    bad = _non_finite(config, "")
    if bad:
        raise ConfigError(f"{bad} must be a finite number, got {_field(config, bad.split('[')[0])!r}")
    for name in POSITIVE:
        if not _field(config, name) > 0:
            raise ConfigError(f"{name} must be > 0, got {_field(config, name)!r}")
    for name in NON_NEGATIVE:
        if not _field(config, name) >= 0:
            raise ConfigError(f"{name} must be >= 0 (0 = off), got {_field(config, name)!r}")
    for name in FRACTIONS:
        if not 0.0 <= _field(config, name) < 1.0:
            raise ConfigError(f"{name} must be in [0, 1), got {_field(config, name)!r}")
    if not 0.0 < config.training.plateau_factor < 1.0:
        raise ConfigError(f"training.plateau_factor must be in (0, 1), got {config.training.plateau_factor}")
    if len(config.training.betas) != 2 or not all(0.0 <= b < 1.0 for b in config.training.betas):
        raise ConfigError(f"training.betas must be two numbers in [0, 1), got {config.training.betas}")
