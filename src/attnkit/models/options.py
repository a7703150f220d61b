"""Each model's options: the keyword arguments of its constructor, as the config's ``model.<section>``.

Torch-free, so a config loads (and checks itself) where torch is not installed; ``names.MODEL_TABLE`` names
each class, and tests/models/test_options.py keeps every class's fields equal to its model's keyword
arguments, so an option added to a model and not here (or the reverse) fails a test.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ..config import check_ranges
from ..errors import ConfigError


@dataclass
class RNNConfig:
    """The options of ``RNNSeq2Seq`` (the config's ``model.rnn``): its keyword arguments."""

    embed_size: int = 256
    hidden_size: int = 256
    scorer: str = "additive"
    rnn_type: str = "gru"
    num_layers: int = 1
    dropout: float = 0.2
    input_feeding: bool = True
    tied_embeddings: bool = True

    def validate(self, where: str) -> None:
        check_ranges(self, where, ("embed_size", "hidden_size", "num_layers"), ("dropout",))


@dataclass
class TransformerConfig:
    """The options of ``TransformerSeq2Seq`` (the config's ``model.transformer``): its keyword arguments."""

    d_model: int = 256
    num_heads: int = 4
    ff_size: int = 1024
    encoder_layers: int = 3
    decoder_layers: int = 3
    dropout: float = 0.1
    attention_layer: int = -1  # which decoder layer's head-averaged cross-attention to return

    def validate(self, where: str) -> None:
        sizes = ("d_model", "num_heads", "ff_size", "encoder_layers", "decoder_layers")
        check_ranges(self, where, sizes, ("dropout",))
        if self.d_model % self.num_heads:
            raise ConfigError(
                f"{where}d_model ({self.d_model}) must be a multiple of num_heads ({self.num_heads})"
            )


@dataclass
class HANConfig:
    """The options of ``HAN`` (the config's ``model.han``): its keyword arguments. What only training reads
    (class weights, initial word vectors) is in ``training``."""

    embed_size: int = 100
    word_hidden: int = 50
    sentence_hidden: int = 50
    dropout: float = 0.3
    word_dropout: float = 0.0  # in training, each word's vector is blanked with this probability

    def validate(self, where: str) -> None:
        sizes = ("embed_size", "word_hidden", "sentence_hidden")
        check_ranges(self, where, sizes, ("dropout", "word_dropout"))


@dataclass
class CaptionerConfig:
    """The options of ``Captioner`` (the config's ``model.captioner``, for ``captioner`` with soft attention
    and ``hard_captioner``), and the input size every image is resized to."""

    channels: int = 1  # 1: grayscale, 3: RGB; any image is converted (data.images)
    height: int = 48  # the input size: a multiple of the grid's cell (stem_pool * 2^len(conv_channels))
    width: int = 192
    # the input is average-pooled by stem_pool first, then each conv block halves it: the UCI glyphs are
    # 8 x 8 scans drawn at 16-24 px, so half resolution loses nothing and costs a quarter
    stem_pool: int = 2
    conv_channels: list[int] = field(default_factory=lambda: [32, 64])  # one pooling block each
    embed_size: int = 64
    hidden_size: int = 256
    attention_size: int = 128
    scorer: str = "additive"
    dropout: float = 0.3
    # "" = the small CNN above; "resnet18" / "resnet34": a ResNet trunk (stride 16, 256 channels), its
    # ImageNet weights from training.backbone_weights
    backbone: str = ""

    def model_arguments(self) -> dict[str, Any]:
        """``Captioner``'s keyword arguments: the input size is the images', not a weight's."""
        return {k: v for k, v in dataclasses.asdict(self).items() if k not in ("height", "width")}

    def validate(self, where: str) -> None:
        sizes = ("height", "width", "embed_size", "hidden_size", "attention_size")
        check_ranges(self, where, sizes, ("dropout",))
        if self.channels not in (1, 3):
            raise ConfigError(f"{where}channels must be 1 (grayscale) or 3 (RGB), got {self.channels}")
        if not self.conv_channels or any(n <= 0 for n in self.conv_channels):
            raise ConfigError(f"{where}conv_channels must be positive sizes, got {self.conv_channels}")
        if self.stem_pool < 1:
            raise ConfigError(f"{where}stem_pool must be >= 1 (1 = none), got {self.stem_pool}")
        if self.backbone not in ("", "resnet18", "resnet34"):
            raise ConfigError(f"{where}backbone: unknown {self.backbone!r}; valid: resnet18, resnet34 or ''")
        step = 16 if self.backbone else self.stem_pool * 2 ** len(self.conv_channels)
        for name, value in (("height", self.height), ("width", self.width)):
            if value % step:
                raise ConfigError(
                    f"{where}{name} ({value}) must be a multiple of {step} "
                    f"(stem_pool * 2 ** len(conv_channels): the grid's cell size)"
                )
