"""Options several subcommands share (argparse only: importing this stays instant)."""

from __future__ import annotations

import argparse


def add_backend(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--backend",
        choices=("auto", "onnx", "torch"),
        default="auto",
        help="onnx: the model's ONNX export on onnxruntime (no torch); torch: the checkpoint; "
        "auto (default): onnx when the model has an export and --device is cpu",
    )
