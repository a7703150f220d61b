"""One place that shows the wiring: config -> model."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from torch import nn

from ..checkpoint import Checkpoint, load_checkpoint
from ..config import ExperimentConfig, ModelConfig
from ..errors import UsageError
from ..names import MODEL_TABLE, Registry

MODELS = Registry("model", MODEL_TABLE)  # names -> the builders below (``attnkit.names``)


def build_rnn(config: ModelConfig, vocab_size: int, **sizes: Any) -> nn.Module:
    from .rnn_seq2seq import RNNSeq2Seq

    return RNNSeq2Seq(vocab_size, **_seq2seq(sizes), **dataclasses.asdict(config.options))


def build_transformer(config: ModelConfig, vocab_size: int, **sizes: Any) -> nn.Module:
    from .transformer import TransformerSeq2Seq

    return TransformerSeq2Seq(vocab_size, **_seq2seq(sizes), **dataclasses.asdict(config.options))


def build_han(config: ModelConfig, vocab_size: int, **sizes: Any) -> nn.Module:
    from .han import HAN

    return HAN(vocab_size, num_classes=sizes["num_classes"], **dataclasses.asdict(config.options))


def build_captioner(config: ModelConfig, vocab_size: int, **sizes: Any) -> nn.Module:
    from .captioner import Captioner

    return Captioner(vocab_size, **config.options.model_arguments())


def build_hard_captioner(config: ModelConfig, vocab_size: int, **sizes: Any) -> nn.Module:
    from .captioner import Captioner

    return Captioner(vocab_size, **config.options.model_arguments(), hard=True)


def _seq2seq(sizes: dict[str, Any]) -> dict[str, Any]:
    return {"target_ids": sizes["target_ids"], "src_vocab_size": sizes["src_vocab_size"]}


def build_model(
    config: ModelConfig,
    vocab_size: int,
    num_classes: int = 5,
    target_ids: list[int] | None = None,
    src_vocab_size: int | None = None,
) -> nn.Module:
    """Make the model named by ``config.name`` (``attnkit.names.MODEL_TABLE``) with its section of the config;
    unknown names list the valid ones.

    Translation models: ``vocab_size`` is the (joint or target) embedding size, ``src_vocab_size`` that
    of a separate source embedding (None: joint vocabulary), ``target_ids`` the target-side pieces
    (see ``TiedOutput``). Classifiers: ``num_classes``.
    """
    build = MODELS.get(config.name)
    return build(
        config, vocab_size, num_classes=num_classes, target_ids=target_ids, src_vocab_size=src_vocab_size
    )


def build_for_checkpoint(
    ckpt: Checkpoint, config: ExperimentConfig, vocab_size: int, **sizes: Any
) -> nn.Module:
    """The model a checkpoint's weights fit: its config's model, or an ensemble of its members'."""
    members = ckpt.ensemble
    if not members:
        return build_model(config.model, vocab_size, **sizes)
    from .han import HANEnsemble

    return HANEnsemble([build_model(m.model, vocab_size, **sizes) for m in members])


def load_for_inference(path: str | Path, task: str) -> tuple[Checkpoint, ExperimentConfig]:
    """A checkpoint and its config, checked to be of ``task`` (translation or classification)."""
    ckpt = load_checkpoint(path)
    config = ckpt.config
    if config.task != task:
        raise UsageError(f"{path} is a {config.task} model, not a {task} model")
    return ckpt, config


# Model options that do not change the weights' shapes or meaning: free to differ from init_from's.
_NOT_ARCHITECTURE = (
    "dropout",
    "word_dropout",
    "attention_layer",
)


def init_checkpoint(config: ExperimentConfig) -> Checkpoint:
    """The checkpoint ``training.init_from`` names (a path or a shipped model), checked to hold a model
    of the same task and architecture as ``config``, so its weights, tokenizer and vocabulary fit."""
    from ..pretrained import resolve

    path = resolve(config.training.init_from, config.task)
    ckpt, source = load_for_inference(path, config.task)
    if ckpt.ensemble:
        raise UsageError(f"training.init_from: {path} is an ensemble; start from one of its members")
    differ = architecture_differences(source.model, config.model)
    if differ:
        raise UsageError(f"training.init_from: {path} has another architecture ({'; '.join(differ)})")
    return ckpt


def architecture_differences(theirs: ModelConfig, mine: ModelConfig) -> list[str]:
    """The options of two model configs that change the weights' shapes or meaning, where they differ
    ("model.d_model: 256 there, 512 here"); dropout and the other ``_NOT_ARCHITECTURE`` options aside."""
    if theirs.name != mine.name:
        return [f"model.name: {theirs.name!r} there, {mine.name!r} here"]
    a, b = dataclasses.asdict(theirs.options), dataclasses.asdict(mine.options)
    return [
        f"model.{k}: {a[k]!r} there, {b[k]!r} here" for k in b if k not in _NOT_ARCHITECTURE and a[k] != b[k]
    ]


def restore(model: nn.Module, ckpt: Checkpoint, int8: bool = False) -> nn.Module:
    """Load weights (fp16 shipped weights become fp32) and switch to eval mode.

    ``int8``: return an int8-weight copy for CPU inference instead (see ``quantize``).
    """
    model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in ckpt.model.items()})
    if int8:
        from .quantize import quantize_int8

        return quantize_int8(model)
    return model.eval()
