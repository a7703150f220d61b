"""Export a captioner: an ``encoder`` graph (image -> annotation vectors and the first state) and a
decoder ``step`` graph that returns the next word's log-probabilities and its attention over the grid.

Both graphs wrap the model's own ``encode``/``start``/``step`` (no second formulation of the model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from ..captioner import Captioner
from ..config import to_dict
from ..models.captioner import Captioner as CaptionerModel
from .onnx_files import check, trace


class _Encoder(nn.Module):
    def __init__(self, model: CaptionerModel) -> None:
        super().__init__()
        self.model = model

    def forward(self, images: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        annotations, _ = self.model.encode(images)
        h, c, keys = self.model.start(annotations)
        return annotations, annotations if keys is None else keys, h, c


class _Step(nn.Module):
    def __init__(self, model: CaptionerModel) -> None:
        super().__init__()
        self.model = model
        self.has_keys = model.attention.precompute(torch.zeros(1, 1, model.encoder.out_size)) is not None

    def forward(
        self, prev: Tensor, annotations: Tensor, keys: Tensor, h: Tensor, c: Tensor
    ) -> tuple[Tensor, Tensor, Tensor, Tensor]:
        out = self.model.step(prev, annotations, keys if self.has_keys else None, h, c)
        return torch.log_softmax(out.logits, -1), out.h, out.c, out.alpha


def export_captioner(path: Path, root: Path, int8: bool) -> tuple[Captioner, dict[str, Any]]:
    """int8 is not offered: the step's matrices are small and the encoder is convolutions."""
    captioner = Captioner.from_checkpoint(path)
    model = captioner.model
    images = torch.rand(2, captioner.channels, captioner.height, captioner.width)
    state = ["annotations", "keys", "h", "c"]
    trace(
        _Encoder(model),
        (images,),
        root / "encoder.onnx",
        ["images"],
        state,
        {"images": {0: "batch"}, **{name: {0: "batch"} for name in state}},
    )
    with torch.no_grad():
        annotations, keys, h, c = _Encoder(model)(images)
    prev = torch.tensor([2, 5])
    outputs = ["log_probs", "h_out", "c_out", "attention"]
    axes = {name: {0: "batch"} for name in ["prev", *state, *outputs]}
    trace(_Step(model), (prev, annotations, keys, h, c), root / "step.onnx", ["prev", *state], outputs, axes)
    for name in ("encoder.onnx", "step.onnx"):
        check(root / name)
    graphs = {"fp32": {"encoder": "encoder.onnx", "step": "step.onnx"}}
    meta = {
        "config": to_dict(captioner.config),
        "vocabulary": captioner.words,
        "grid": list(captioner.grid),
        "hard": bool(model.hard),
    }
    io = {"inputs": ["images"], "state": state, "step_outputs": outputs}
    return captioner, {"kind": "captioner", "graphs": graphs, "io": io, "meta": meta}
