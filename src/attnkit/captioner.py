"""Caption images with a captioner checkpoint on torch (reading, batching, search: ``CaptionerBase``)."""

from __future__ import annotations

from pathlib import Path

from torch import nn

from . import search
from .caption_base import Caption, CaptionerBase
from .config import ExperimentConfig
from .decoding.captions import caption_stepper
from .device import resolve_device
from .models.build import build_model, load_for_inference, restore
from .models.captioner import Captioner as CaptionerModel

__all__ = ["Caption", "Captioner"]


class Captioner(CaptionerBase):
    """A ``captioner`` or ``hard_captioner`` checkpoint (``models.captioner``)."""

    backend = "torch"

    def __init__(self, model: nn.Module, words: list[str], config: ExperimentConfig, path: str = "") -> None:
        assert isinstance(model, CaptionerModel)
        self.model, self.words, self.config, self.path = model.eval(), words, config, path
        c = config.model.captioner
        self.channels, self.height, self.width = c.channels, c.height, c.width
        self.grid = model.encoder.grid((c.height, c.width))
        self.max_len = config.data.max_len

    @classmethod
    def from_checkpoint(cls, path: str | Path, device: str = "cpu") -> Captioner:
        ckpt, config = load_for_inference(path, "captioning")
        words = list(ckpt.vocabulary or [])
        model = restore(build_model(config.model, len(words)), ckpt).to(resolve_device(device))
        return cls(model, words, config, str(path))

    def _stepper(self) -> search.Stepper:
        return caption_stepper(self.model)  # type: ignore[return-value]
