"""How fast ``attnkit caption`` answers: the whole process (start, load, read the image, caption, print)
torch-free on the ONNX export vs the same command on torch, and the in-process latency per image of both.

    python benchmarks/captioner.py [--model digits-captioner] [--runs 10]

Prints medians and ratios measured in this run (absolute times drift between machines and runs)."""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def whole_process(model: str, image: Path, backend: str, runs: int) -> float:
    command = [sys.executable, "-m", "attnkit", "caption", str(image), "--model", model, "--backend", backend]
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env={**os.environ, "OMP_NUM_THREADS": "2"})
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def in_process(model: str, image: Path, backend: str, runs: int, beam: int) -> float:
    from attnkit.api import load_captioner

    captioner = load_captioner(model, backend=backend)
    captioner.caption_files([image], beam_size=beam)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        captioner.caption_files([image], beam_size=beam)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="digits-captioner")
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    from PIL import Image

    from attnkit.datasets.digits import digit_strings

    with tempfile.TemporaryDirectory() as tmp:
        image = Path(tmp) / "digits.png"
        Image.fromarray(digit_strings("test", 1)[0].image).save(image)
        onnx = whole_process(args.model, image, "onnx", args.runs)
        torch = whole_process(args.model, image, "torch", args.runs)
        print(f"whole process, `attnkit caption img.png` (median of {args.runs}):")
        print(f"  onnx (torch-free) {onnx * 1000:7.0f} ms")
        print(f"  torch             {torch * 1000:7.0f} ms   onnx/torch {onnx / torch:.2f}x")
        for beam in (1, 5):
            a = in_process(args.model, image, "onnx", args.runs * 5, beam)
            b = in_process(args.model, image, "torch", args.runs * 5, beam)
            print(
                f"in process, one image, beam {beam}: onnx {a * 1000:.1f} ms, torch {b * 1000:.1f} ms, "
                f"onnx/torch {a / b:.2f}x"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
