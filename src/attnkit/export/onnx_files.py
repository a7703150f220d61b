"""Writing ONNX files: trace a graph module, check it, store weights compactly, quantize to int8."""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

OPSET = 17
_SMALL = 16  # initializers with fewer values stay as they are (scalars, shapes)


def trace(
    module: nn.Module,
    args: tuple[Any, ...],
    path: Path,
    inputs: list[str],
    outputs: list[str],
    axes: dict[str, dict[int, str]],
) -> None:
    """Trace ``module`` on example ``args`` into ``path`` (opset ``OPSET``), ``axes`` dynamic."""
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer warnings about Python control flow on shapes
        torch.onnx.export(
            module.eval(),
            args,
            str(path),
            input_names=inputs,
            output_names=outputs,
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
            do_constant_folding=True,
        )


def check(path: Path) -> None:
    """``onnx.checker`` on the file, with full shape inference."""
    import onnx

    onnx.checker.check_model(str(path), full_check=True)


def store_half(path: Path, lossy: bool = False) -> int:
    """Store float32 weights as float16 followed by a Cast to float32, where that loses nothing (every
    value of a model trained and shipped in fp16 is exact in fp16) or everywhere when ``lossy``.
    The graph still computes in float32. A table read only by Gather (an embedding) stays float16 in
    memory too: the Cast moves after the Gather (the same values; onnxruntime would otherwise fold the
    Cast into a float32 copy of the whole table). Returns the number of initializers converted."""
    import onnx
    from onnx import TensorProto, numpy_helper

    model = onnx.load(str(path))
    readers: dict[str, list[tuple[Any, int]]] = {}
    for node in model.graph.node:
        for slot, name in enumerate(node.input):
            readers.setdefault(name, []).append((node, slot))
    casts, after, converted = [], {}, 0
    for init in model.graph.initializer:
        if init.data_type != TensorProto.FLOAT:
            continue
        values = numpy_helper.to_array(init)
        half = values.astype(np.float16)
        if values.size < _SMALL or not (lossy or np.array_equal(half.astype(np.float32), values)):
            continue
        name, uses = init.name, readers.get(init.name, [])
        init.CopyFrom(numpy_helper.from_array(half, f"{name}__fp16"))
        converted += 1
        if uses and all(node.op_type == "Gather" and slot == 0 for node, slot in uses):
            for node, _ in uses:
                node.input[0], out = f"{name}__fp16", node.output[0]
                node.output[0] = f"{out}__fp16"
                after[id(node)] = _cast(f"{out}__fp16", out)
        else:
            casts.append(_cast(f"{name}__fp16", name))
    nodes = casts + [n for node in model.graph.node for n in (node, after.get(id(node))) if n is not None]
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    onnx.save(model, str(path))
    return converted


def _cast(source: str, target: str) -> Any:
    from onnx import TensorProto, helper

    return helper.make_node("Cast", [source], [target], to=TensorProto.FLOAT)


def quantize_int8(src: Path, dst: Path) -> None:
    """Dynamic int8 quantization of the MatMul/Gemm weights (activations quantized per call), as
    ``torch.ao.quantization.quantize_dynamic`` does for the torch int8 path. Weights use 7 bits
    (``reduce_range``): onnxruntime's u8 x s8 kernels on CPUs without VNNI (AVX2 only, e.g. this project's
    AMD EPYC machines) add pairs of products in int16, which can saturate with full-range weights: without
    it, the tests' tiny LSTM export kept only 1 of 3 probe translations on such a CPU and was refused."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with warnings.catch_warnings(), _root_logging_muted():
        warnings.simplefilter("ignore")
        quantize_dynamic(
            str(src),
            str(dst),
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul", "Gemm"],
            reduce_range=True,
        )


@contextlib.contextmanager
def _root_logging_muted() -> Iterator[None]:
    """onnxruntime's quantizer logs advice for its own users ("consider pre-processing") on the root
    logger, which also installs a handler there (``logging.warning`` calls ``basicConfig``): both would
    reach an attnkit user's terminal, ``--quiet`` or not. A NullHandler keeps ``basicConfig`` away and
    a filter drops the quantizer's records while it runs."""
    root = logging.getLogger()
    handler, drop = logging.NullHandler(), lambda record: "onnxruntime" not in record.pathname
    root.addHandler(handler)
    root.addFilter(drop)
    try:
        yield
    finally:
        root.removeFilter(drop)
        root.removeHandler(handler)


def quantized(root: Path, name: str, int8_name: str) -> str:
    """Quantize ``root/name`` to ``root/int8_name``; when that leaves the file within 10% of its size
    (nothing quantizable: the weights sit in embeddings and RNN cells), keep the fp32 graph for both
    variants instead of shipping a near copy. Returns the file the int8 variant uses."""
    quantize_int8(root / name, root / int8_name)
    if (root / int8_name).stat().st_size > 0.9 * (root / name).stat().st_size:
        (root / int8_name).unlink()
        return name
    return int8_name


def add_top_k(path: Path, scores: str = "log_probs") -> None:
    """Append a TopK over ``scores`` (B, V) to the graph: input ``k`` (1,) int64, outputs
    ``top_values`` (B, k) and ``top_ids`` (B, k) int64, largest first. Beam search needs only these, so
    the (B, V) distribution never leaves onnxruntime."""
    import onnx
    from onnx import TensorProto, helper

    model = onnx.load(str(path))
    graph = model.graph
    graph.input.append(helper.make_tensor_value_info("k", TensorProto.INT64, [1]))
    graph.node.append(
        helper.make_node("TopK", [scores, "k"], ["top_values", "top_ids"], axis=-1, largest=1, sorted=1)
    )
    graph.output.append(helper.make_tensor_value_info("top_values", TensorProto.FLOAT, ["batch", "k"]))
    graph.output.append(helper.make_tensor_value_info("top_ids", TensorProto.INT64, ["batch", "k"]))
    onnx.save(model, str(path))
