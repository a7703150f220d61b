"""Reading and validating parallel text and documents, subword tokenization, batching by tokens.

Names are imported on first use, so torch-free parts (``tokenizer``, ``parallel``, ``words``, the text side
of ``documents``) load without torch: the ONNX runtime (``attnkit.runtime``) relies on it.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_WHERE = {
    "Batch": "batching",
    "TokenBatcher": "batching",
    "DataError": "parallel",
    "normalize": "parallel",
    "read_parallel": "parallel",
    "SubwordTokenizer": "tokenizer",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'attnkit.data' has no attribute {name!r}")
    return getattr(import_module(f".{_WHERE[name]}", __name__), name)
