"""Caption images with an ONNX export of a captioner: the same captions and attention as on torch."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import search
from ..caption_base import Caption, CaptionerBase
from .manifest import ExportError, Manifest, read_manifest
from .sessions import Graph, sessions

__all__ = ["Caption", "OnnxCaptioner"]


@dataclass
class _State:
    """annotations (B, L, D), keys (B, L, A), h and c (B, Hd), as NumPy arrays."""

    arrays: dict[str, np.ndarray]

    def reorder(self, index: np.ndarray) -> _State:
        return _State({k: v[index] for k, v in self.arrays.items()})

    def expand(self, beam: int) -> _State:
        return _State({k: np.repeat(v, beam, 0) for k, v in self.arrays.items()})


class _Stepper:
    def __init__(self, graphs: dict[str, Graph], vocab_size: int) -> None:
        self.graphs = graphs
        self.target_ids = np.arange(vocab_size, dtype=np.int64)

    def encode(self, images: np.ndarray, cells: np.ndarray) -> _State:
        annotations, keys, h, c = self.graphs["encoder"].run(None, {"images": images.astype(np.float32)})
        return _State({"annotations": annotations, "keys": keys, "h": h, "c": c})

    def step(
        self, prev: np.ndarray, state: _State, k: int
    ) -> tuple[np.ndarray, np.ndarray, _State, np.ndarray]:
        feeds = {"prev": prev[:, 0].astype(np.int64), **state.arrays}
        log_probs, h, c, attention = self.graphs["step"].run(None, feeds)
        values, ids = search.top_candidates(log_probs, k)
        new = _State({**state.arrays, "h": h, "c": c})
        return values, ids, new, attention[:, None]


class OnnxCaptioner(CaptionerBase):
    backend = "onnx"

    def __init__(self, manifest: Manifest, variant: str = "fp32") -> None:
        if manifest.task != "captioning":
            raise ExportError(f"{manifest.root}: a {manifest.task} export, not a captioner")
        meta = manifest.meta
        self.manifest, self.path = manifest, str(manifest.root)
        config = meta["config"]
        section = config["model"]["captioner"]
        self.channels, self.height, self.width = section["channels"], section["height"], section["width"]
        self.max_len = int(config["data"]["max_len"])
        self.words = list(meta["vocabulary"])
        self.grid = (int(meta["grid"][0]), int(meta["grid"][1]))
        self.graphs = sessions(manifest, variant if variant in manifest.graphs else "fp32")

    @classmethod
    def from_export(cls, path: str | Path) -> OnnxCaptioner:
        return cls(read_manifest(path, "captioning"))

    def _stepper(self) -> search.Stepper:
        return _Stepper(self.graphs, len(self.words))
