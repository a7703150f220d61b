"""``attnkit export MODEL --out DIR [--int8 | --int8-only]``: ONNX graphs, tokenizer, manifest."""

from __future__ import annotations

import argparse
from typing import Any

from ..files import json_text


def add_parser(sub: Any, name: str) -> None:
    p = sub.add_parser(name, help="export a model to ONNX for the torch-free runtime (--backend onnx)")
    p.add_argument("model", help="checkpoint path or shipped model name (see `attnkit list`)")
    p.add_argument("--out", required=True, help="folder to write (replaced only once the export is checked)")
    p.add_argument("--int8", action="store_true", help="also write int8-weight graphs (run with --int8)")
    p.add_argument(
        "--int8-only",
        action="store_true",
        help="keep only the int8 graphs (fp32 checked, then dropped; enfr-transformer 21.6 MB, not 54)",
    )
    p.add_argument(
        "--format",
        choices=("onnx", "hf"),
        default="onnx",
        help="onnx (default): graphs for the torch-free runtime; hf: a Hugging Face Pegasus folder "
        "(Transformers only) that transformers loads with its own classes",
    )
    p.add_argument(
        "--lossy-fp16",
        action="store_true",
        help="store every weight in fp16 (half the size; rounds fp32-trained weights)",
    )
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..errors import UsageError
    from ..export import export

    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise UsageError(f"--out {args.out} is a file; give a folder (new, empty, or an earlier export)")
    if args.format == "hf":
        from ..export.hf import export_hf

        if args.int8 or args.int8_only or args.lossy_fp16:
            raise UsageError("--format hf writes fp32 weights; --int8/--int8-only/--lossy-fp16 are for onnx")
        report = export_hf(args.model, args.out)
        print(f"exported {args.model or 'the default model'} to {args.out} as a Hugging Face Pegasus folder")
        print("check against torch: " + json_text(report))
        return 0

    manifest = export(
        args.model,
        args.out,
        int8=args.int8 or args.int8_only,
        lossy_fp16=args.lossy_fp16,
        only_int8=args.int8_only,
    )
    sizes = ", ".join(f"{n}" for n in sorted(manifest["files"]))
    print(f"exported {manifest['kind']} model to {args.out}: {sizes}")
    print("check against torch: " + json_text(manifest["meta"]["verification"]))
    return 0
