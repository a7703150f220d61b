"""Export the RNN and Transformer translators: an encoder graph and a decoder-step graph each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from ..config import to_dict
from ..errors import UsageError
from ..models.rnn_seq2seq import RNNSeq2Seq
from ..models.transformer import TransformerSeq2Seq
from ..translator import Translator
from ..vocab import EOS, PAD
from .graphs import (
    MAX_POSITIONS,
    RNN_STATE,
    RNN_UPDATED,
    TRANSFORMER_STATE,
    RNNEncoderGraph,
    RNNStepGraph,
    TransformerEncoderGraph,
    TransformerStepGraph,
    rnn_fields,
)
from .onnx_files import add_top_k, check, quantized, trace

GRAPHS = {"encoder": "encoder.onnx", "step": "step.onnx"}
INT8 = {"encoder": "encoder.int8.onnx", "step": "step.int8.onnx"}
# the graph quantized in place of the fp32 step (same inputs and outputs): the RNN step with its cell as
# matrix products, which int8 covers (2026-12-05: 0.19 -> 0.13 ms per step for enfr-rnn, one sentence)
CELLS_STEP = "step.cells.onnx"


def _example_source() -> tuple[Tensor, Tensor]:
    """Two sources of different lengths, so padding and both masks take part in the trace."""
    src = torch.tensor([[5, 6, 7, 8, EOS], [9, 10, EOS, PAD, PAD]])
    return src, src != PAD


def _source_axes(names: list[str]) -> dict[str, dict[int, str]]:
    return {name: {0: "batch", 1: "source"} for name in names}


def _rnn(model: RNNSeq2Seq, root: Path, int8: bool) -> tuple[dict[str, Any], dict[str, str]]:
    """The graphs' io fields, and role -> the file int8 quantizes instead of the fp32 graph."""
    fields = rnn_fields(model)
    encoder_outputs = [f for f in fields if f != "src_mask"]
    src, src_mask = _example_source()
    axes: dict[str, dict[int, str]] = _source_axes(["src", "src_mask"])
    for name in encoder_outputs:
        axes[name] = {
            RNN_STATE[name]: "batch",
            **({1: "source"} if RNN_STATE[name] == 0 and name != "feed" else {}),
        }
    encoder = RNNEncoderGraph(model)
    trace(encoder, (src, src_mask), root / GRAPHS["encoder"], ["src", "src_mask"], encoder_outputs, axes)
    with torch.no_grad():
        state = dict(zip(encoder_outputs, encoder(src, src_mask)), src_mask=src_mask)
    updates = {f"new_{f}": f for f in fields if f in RNN_UPDATED}
    outputs = ["log_probs", "attention", *updates]
    step_axes = {k: v for k, v in axes.items() if k != "src"}
    step_axes.update(prev={0: "batch"}, log_probs={0: "batch"}, attention={0: "batch", 2: "source"})
    step_axes.update({new: {RNN_STATE[old]: "batch"} for new, old in updates.items()})
    args = (torch.full((2, 1), 5), *(state[f] for f in fields))
    steps = {GRAPHS["step"]: False, **({CELLS_STEP: True} if int8 else {})}
    for name, cells in steps.items():
        trace(RNNStepGraph(model, cells), args, root / name, ["prev", *fields], outputs, step_axes)
        add_top_k(root / name)
    io = {
        "state_axes": {f: RNN_STATE[f] for f in fields},
        "encoder_outputs": encoder_outputs,
        "step_inputs": ["prev", *fields, "k"],
        "step_outputs": [*outputs, "top_values", "top_ids"],
        "updates": updates,
    }
    return io, ({"step": CELLS_STEP} if int8 else {})


def _transformer(model: TransformerSeq2Seq, root: Path) -> dict[str, Any]:
    model.positions.encodings(MAX_POSITIONS)  # grow the source table before tracing: no length limit inside
    src, src_mask = _example_source()
    cross = {0: "layers", 1: "batch", 3: "source"}
    axes = {**_source_axes(["src", "src_mask"]), "cross_k": cross, "cross_v": cross}
    encoder = TransformerEncoderGraph(model)
    trace(
        encoder, (src, src_mask), root / GRAPHS["encoder"], ["src", "src_mask"], ["cross_k", "cross_v"], axes
    )
    with torch.no_grad():
        cross_k, cross_v = encoder(src, src_mask)
    layers, _, heads, _, head_dim = cross_k.shape
    past = torch.randn(layers, 2, heads, 3, head_dim) * 0.1
    inputs = ["prev", "position", "self_k", "self_v", "cross_k", "cross_v", "src_mask"]
    outputs = ["log_probs", "attention", "layer_attention", "new_self_k", "new_self_v"]
    cache, grown = {1: "batch", 3: "past"}, {1: "batch", 3: "past_plus_one"}
    step_axes = {
        "prev": {0: "batch"},
        "self_k": cache,
        "self_v": cache,
        "cross_k": cross,
        "cross_v": cross,
        "src_mask": {0: "batch", 1: "source"},
        "log_probs": {0: "batch"},
        "attention": {0: "batch", 2: "source"},
        "layer_attention": {0: "batch", 3: "source"},
        "new_self_k": grown,
        "new_self_v": grown,
    }
    args = (torch.full((2, 1), 5), torch.tensor([3]), past, past.clone(), cross_k, cross_v, src_mask)
    trace(TransformerStepGraph(model), args, root / GRAPHS["step"], inputs, outputs, step_axes)
    add_top_k(root / GRAPHS["step"])
    empty = [int(layers), -1, int(heads), 0, int(head_dim)]
    return {
        "state_axes": TRANSFORMER_STATE,
        "encoder_outputs": ["cross_k", "cross_v"],
        "step_inputs": [*inputs, "k"],
        "step_outputs": [*outputs, "top_values", "top_ids"],
        "updates": {"new_self_k": "self_k", "new_self_v": "self_v"},
        "empty_state": {"self_k": empty, "self_v": empty},
        "max_positions": MAX_POSITIONS,
    }


def export_seq2seq(path: Path, root: Path, int8: bool) -> tuple[Translator, dict[str, Any]]:
    """Write the graphs, tokenizer(s) and the manifest's fields (not yet its checksums) into ``root``."""
    translator = Translator.from_checkpoint(path)
    model = translator.model
    if isinstance(model, RNNSeq2Seq):
        kind, (io, int8_sources) = "rnn", _rnn(model, root, int8)
    elif isinstance(model, TransformerSeq2Seq):
        kind, io, int8_sources = "transformer", _transformer(model, root), {}
    else:
        raise UsageError(f"{path}: cannot export a {type(model).__name__}")
    graphs = {"fp32": dict(GRAPHS)}
    for name in GRAPHS.values():
        check(root / name)
    if int8:
        graphs["int8"] = {}
        for role, name in GRAPHS.items():
            source = int8_sources.get(role, name)
            chosen = quantized(root, source, INT8[role])
            graphs["int8"][role] = name if chosen == source else chosen
            if source != name:
                (root / source).unlink()
    (root / "tokenizer.model").write_bytes(translator.tokenizer.model_proto)
    meta: dict[str, Any] = {"tokenizer": "tokenizer.model"}
    if translator.target_tokenizer is not translator.tokenizer:
        (root / "target_tokenizer.model").write_bytes(translator.target_tokenizer.model_proto)
        meta["target_tokenizer"] = "target_tokenizer.model"
    meta.update(
        config=to_dict(translator.config),
        target_ids=model.output.target_ids.tolist(),
        max_source_tokens=translator.max_source_tokens,
        attention_layers=translator.attention_layers,
        attention_heads=translator.attention_heads,
        attention_layer=int(getattr(model, "attention_layer", -1)),
    )
    return translator, {"kind": kind, "graphs": graphs, "io": io, "meta": meta}
