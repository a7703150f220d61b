"""One place that shows the wiring: config -> model."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from torch import nn

from ..checkpoint import load_checkpoint
from ..config import ExperimentConfig, ModelConfig, from_dict

MODELS = ("han", "rnn", "transformer")


def build_model(
    config: ModelConfig,
    vocab_size: int,
    num_classes: int = 5,
    target_ids: list[int] | None = None,
    src_vocab_size: int | None = None,
) -> nn.Module:
    """Make the model named by ``config.name`` with its section of the config.

    Translation models: ``vocab_size`` is the (joint or target) embedding size, ``src_vocab_size`` that
    of a separate source embedding (None: joint vocabulary), ``target_ids`` the target-side pieces
    (see ``TiedOutput``).
    """
    sizes: dict[str, Any] = {"target_ids": target_ids, "src_vocab_size": src_vocab_size}
    if config.name == "rnn":
        from .rnn_seq2seq import RNNSeq2Seq

        return RNNSeq2Seq(vocab_size, **sizes, **dataclasses.asdict(config.rnn))
    if config.name == "transformer":
        from .transformer import TransformerSeq2Seq

        return TransformerSeq2Seq(vocab_size, **sizes, **dataclasses.asdict(config.transformer))
    if config.name == "han":
        from .han import HAN

        han = dataclasses.asdict(config.han)
        han.pop("class_weighting")
        han.pop("word2vec_epochs")
        han.pop("word2vec_vectors")
        return HAN(vocab_size, num_classes=num_classes, **han)
    raise ValueError(f"unknown model {config.name!r}; valid names: {', '.join(MODELS)}")


def build_for_checkpoint(
    ckpt: dict[str, Any], config: ExperimentConfig, vocab_size: int, **sizes: Any
) -> nn.Module:
    """The model a checkpoint's weights fit: its config's model, or an ensemble of its members'."""
    members = ckpt.get("ensemble")
    if not members:
        return build_model(config.model, vocab_size, **sizes)
    from .han import HANEnsemble

    return HANEnsemble([build_model(from_dict(ModelConfig, m), vocab_size, **sizes) for m in members])


def load_for_inference(path: str | Path, task: str) -> tuple[dict[str, Any], ExperimentConfig]:
    """A checkpoint and its config, checked to be of ``task`` (translation or classification)."""
    ckpt = load_checkpoint(path)
    config = from_dict(ExperimentConfig, ckpt["config"])
    if config.task != task:
        raise ValueError(f"{path} is a {config.task} model, not a {task} model")
    return ckpt, config


# Model options that do not change the weights' shapes or meaning: free to differ from init_from's.
_NOT_ARCHITECTURE = ("dropout", "class_weighting", "word2vec_epochs", "word2vec_vectors", "attention_layer")


def init_checkpoint(config: ExperimentConfig) -> dict[str, Any]:
    """The checkpoint ``training.init_from`` names (a path or a shipped model), checked to hold a model
    of the same task and architecture as ``config``, so its weights, tokenizer and vocabulary fit."""
    from ..pretrained import resolve

    kind = "classifier" if config.task == "classification" else "translator"
    path = resolve(config.training.init_from, kind)
    ckpt, source = load_for_inference(path, config.task)
    if ckpt.get("ensemble"):
        raise ValueError(f"training.init_from: {path} is an ensemble; start from one of its members")
    section = config.model.name
    mine = {"name": section, **dataclasses.asdict(getattr(config.model, section))}
    theirs = {"name": source.model.name, **dataclasses.asdict(getattr(source.model, section))}
    differ = [
        f"model.{k}: {theirs[k]!r} there, {mine[k]!r} here"
        for k in mine
        if k not in _NOT_ARCHITECTURE and mine[k] != theirs[k]
    ]
    if differ:
        raise ValueError(f"training.init_from: {path} has another architecture ({'; '.join(differ)})")
    return ckpt


def restore(model: nn.Module, ckpt: dict[str, Any], int8: bool = False) -> nn.Module:
    """Load weights (fp16 shipped weights become fp32) and switch to eval mode.

    ``int8``: return an int8-weight copy for CPU inference instead (see ``quantize``).
    """
    model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in ckpt["model"].items()})
    if int8:
        from .quantize import quantize_int8

        return quantize_int8(model)
    return model.eval()
