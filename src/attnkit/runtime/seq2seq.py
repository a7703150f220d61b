"""Translate with an ONNX export: the encoder and decoder-step graphs as an ``attnkit.search.Stepper``.

The search (greedy, beam, n-best, length penalty) is ``attnkit.search``, the same code the torch models
run; this module only feeds graphs and carries their state between steps. No torch import.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..data.arrays import MAX_SOURCE_TOKENS, pad_ids, source_arrays
from ..data.tokenizer import SubwordTokenizer
from ..results import Translation
from ..search import top_candidates
from ..translate_base import TranslatorBase
from ..vocab import BOS
from .manifest import ExportError, Manifest, read_manifest
from .sessions import parallel_map, sessions, threads

T = TypeVar("T")
R = TypeVar("R")

__all__ = ["OnnxStepper", "OnnxTranslator", "Translation"]


@dataclass
class ArrayState:
    """Named state arrays, each with its batch axis; ``position``: steps decoded so far."""

    arrays: dict[str, np.ndarray]
    axes: dict[str, int]
    position: int = 0

    def reorder(self, index: np.ndarray) -> ArrayState:
        arrays = {k: np.take(v, index, axis=self.axes[k]) for k, v in self.arrays.items()}
        return ArrayState(arrays, self.axes, self.position)

    def expand(self, beam: int) -> ArrayState:
        arrays = {k: np.repeat(v, beam, axis=self.axes[k]) for k, v in self.arrays.items()}
        return ArrayState(arrays, self.axes, self.position)


class OnnxStepper:
    """The export's ``encoder`` and ``step`` graphs. Shapes as ``search.Stepper``; ``step_outputs``
    also gives the Transformer's ``layer_attention`` (B, L, H, S)."""

    def __init__(self, manifest: Manifest, graphs: dict[str, Any]) -> None:
        io = manifest.io
        self.encoder, self.step_graph = graphs["encoder"], graphs["step"]
        self.target_ids = np.asarray(manifest.meta["target_ids"], dtype=np.int64)
        self.axes: dict[str, int] = io["state_axes"]
        self.encoder_outputs: list[str] = io["encoder_outputs"]
        self.step_inputs: list[str] = io["step_inputs"]
        self.step_names: list[str] = io["step_outputs"]
        self.updates: dict[str, str] = io["updates"]  # step output -> the state field it replaces
        self.empty: dict[str, list[int]] = io.get("empty_state", {})  # field -> shape, -1 = batch

    def encode(self, src: np.ndarray, src_mask: np.ndarray) -> ArrayState:
        feeds = {"src": src.astype(np.int64), "src_mask": src_mask.astype(bool)}
        outputs = self.encoder.run(None, feeds, src.shape[0])
        arrays = dict(zip(self.encoder_outputs, outputs))
        arrays["src_mask"] = src_mask.astype(bool)
        for name, shape in self.empty.items():
            arrays[name] = np.zeros([src.shape[0] if d == -1 else d for d in shape], dtype=np.float32)
        return ArrayState(arrays, self.axes)

    def step_outputs(
        self, prev: np.ndarray, state: ArrayState, names: list[str], k: int = 0
    ) -> tuple[dict[str, np.ndarray], ArrayState]:
        """Run the step graph for the outputs ``names`` (plus the state updates); ``k``: how many best
        continuations the graph's TopK returns (graphs exported with one)."""
        feeds = {name: state.arrays[name] for name in self.step_inputs if name in state.arrays}
        feeds["prev"] = prev.astype(np.int64, copy=False)
        if "position" in self.step_inputs:
            feeds["position"] = np.array([state.position], dtype=np.int64)
        if "k" in self.step_inputs:
            feeds["k"] = np.array([max(k, 1)], dtype=np.int64)
        wanted = [*names, *self.updates]
        out = dict(zip(wanted, self.step_graph.run(wanted, feeds, prev.shape[0])))
        arrays = dict(state.arrays)
        for output, name in self.updates.items():
            arrays[name] = out[output]
        return out, ArrayState(arrays, self.axes, state.position + 1)

    def step(
        self, prev: np.ndarray, state: ArrayState, k: int
    ) -> tuple[np.ndarray, np.ndarray, ArrayState, np.ndarray]:
        if "k" in self.step_inputs:
            out, new = self.step_outputs(prev, state, ["top_values", "top_ids", "attention"], k)
            return out["top_values"], out["top_ids"], new, out["attention"]
        out, new = self.step_outputs(prev, state, ["log_probs", "attention"])  # an export without TopK
        values, ids = top_candidates(out["log_probs"], k)
        return values, ids, new, out["attention"]

    def step_log_probs(self, prev: np.ndarray, state: ArrayState) -> tuple[np.ndarray, ArrayState]:
        """The whole next-token distribution (B, V_out) (forced scoring: no TopK over it)."""
        out, new = self.step_outputs(prev, state, ["log_probs"], 1)
        return out["log_probs"], new


class OnnxTranslator(TranslatorBase):
    """A translation export (``attnkit export``) run by onnxruntime; the same results as ``Translator``."""

    def __init__(self, manifest: Manifest, variant: str = "fp32", intra_threads: int | None = None) -> None:
        if manifest.task != "translation":
            raise ExportError(f"{manifest.root}: a {manifest.task} export, not a translation model")
        self.manifest, self.variant, self.path = manifest, variant, str(manifest.root)
        meta = manifest.meta
        self.tokenizer = SubwordTokenizer(manifest.file(meta["tokenizer"]).read_bytes())
        target = meta.get("target_tokenizer")
        self.target_tokenizer = (
            self.tokenizer if target is None else SubwordTokenizer(manifest.file(target).read_bytes())
        )
        self.max_source_tokens = int(meta.get("max_source_tokens", MAX_SOURCE_TOKENS))
        self.stepper = OnnxStepper(manifest, sessions(manifest, variant, intra_threads))
        self.workers = intra_threads or threads()  # batches decoded at once (``translate``)

    @classmethod
    def from_export(
        cls, path: str | Path, int8: bool = False, intra_threads: int | None = None
    ) -> OnnxTranslator:
        return cls(read_manifest(path, "translation"), "int8" if int8 else "fp32", intra_threads)

    def _stepper(self) -> OnnxStepper:
        return self.stepper

    def _map_batches(self, fn: Callable[[T], R], batches: list[T]) -> Iterator[R]:
        """Batches in parallel threads, one graph thread each (see ``runtime.sessions``)."""
        return parallel_map(fn, batches, self.workers)

    @property
    def attention_layers(self) -> int:
        return int(self.manifest.meta.get("attention_layers", 0))

    backend = "onnx"

    @property
    def kind(self) -> str:
        return "onnx-transformer" if self.attention_layers else "onnx-rnn"

    @property
    def attention_heads(self) -> int:
        return int(self.manifest.meta.get("attention_heads", 1))

    def _forced(self, src_ids: list[list[int]], tgt_ids: list[list[int]], key: str) -> np.ndarray:
        """Teacher-forced steps over the targets (BOS first): per step the ``key`` output stacked on a
        time axis 1. Shapes: -> (B, T, S) for "attention", (B, T, L, H, S) for "layer_attention"."""
        src, src_mask = source_arrays(src_ids)
        tgt_in = pad_ids(tgt_ids, prefix=BOS)  # (B, T)
        state, rows = self.stepper.encode(src, src_mask), []
        for t in range(tgt_in.shape[1]):
            out, state = self.stepper.step_outputs(tgt_in[:, t : t + 1], state, [key])
            rows.append(out[key][:, 0] if key == "attention" else out[key])
        return np.stack(rows, 1)

    @property
    def default_layer(self) -> int:
        return int(self.manifest.meta.get("attention_layer", -1))

    def _forced_maps(self, src_ids: list[list[int]], tgt_ids: list[list[int]], layers: bool) -> np.ndarray:
        """Shapes: -> (B, T, S), or (B, L, H, T, S) with ``layers`` (see ``TranslatorBase``)."""
        if layers:
            return self._forced(src_ids, tgt_ids, "layer_attention").transpose(0, 2, 3, 1, 4)
        return self._forced(src_ids, tgt_ids, "attention")
