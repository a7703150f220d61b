"""Compare two export folders graph by graph: are the files identical, and how far apart are the outputs?

    attnkit export enfr-transformer --out /tmp/before/enfr-transformer --int8   # on the old commit
    attnkit export enfr-transformer --out /tmp/after/enfr-transformer --int8    # on the new one
    python scripts/compare_exports.py /tmp/before /tmp/after

Every ``*/*.onnx`` under BEFORE is run beside its namesake under AFTER on the same seeded random inputs
(ids, masks with padding, float states; dynamic axes of size 3), by onnxruntime with and without its graph
optimizations. Prints one row per graph and the largest fp32 difference; exits 1 when that exceeds --tol.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort

SCALARS = {"position": 3, "k": 5}  # (1,) int64 inputs: the step's position, the top-k size


def _feeds(session: ort.InferenceSession, seed: int) -> dict[str, np.ndarray]:
    rng, feeds = np.random.default_rng(seed), {}
    for spec in session.get_inputs():
        shape = [d if isinstance(d, int) else 3 for d in spec.shape]
        if spec.name in SCALARS:
            feeds[spec.name] = np.array([SCALARS[spec.name]], dtype=np.int64)
        elif "int64" in spec.type:
            feeds[spec.name] = rng.integers(4, 12, size=shape).astype(np.int64)  # in every vocabulary
        elif "bool" in spec.type:
            mask = np.ones(shape, dtype=bool)
            if mask.ndim >= 2 and mask.shape[0] > 1:
                mask[1:, ..., -1] = False  # padding in every row but the first
            feeds[spec.name] = mask
        else:
            feeds[spec.name] = (rng.standard_normal(shape) * 0.5).astype(np.float32)
    return feeds


def _session(path: Path, optimize: bool) -> ort.InferenceSession:
    options = ort.SessionOptions()
    if not optimize:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def compare(before: Path, after: Path, optimize: bool) -> float:
    """Largest |difference| over all outputs of one graph pair."""
    a, b = _session(before, optimize), _session(after, optimize)
    feeds = _feeds(a, seed=0)
    pairs = zip(a.run(None, feeds), b.run(None, feeds))
    return max((float(np.abs(x.astype(np.float64) - y).max()) if x.size else 0.0) for x, y in pairs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--tol", type=float, default=1e-6, help="largest fp32 difference allowed")
    args = parser.parse_args()
    worst = 0.0
    for old in sorted(args.before.glob("*/*.onnx")):
        new = args.after / old.parent.name / old.name
        same = hashlib.sha256(old.read_bytes()).digest() == hashlib.sha256(new.read_bytes()).digest()
        raw, optimized = compare(old, new, False), compare(old, new, True)
        if ".int8." not in old.name:
            worst = max(worst, raw, optimized)
        name = f"{old.parent.name}/{old.name}"
        print(f"{name:40s} identical file: {same!s:5s}  max |diff| {raw:.3g} (optimized {optimized:.3g})")
    print(f"largest fp32 difference: {worst:.3g} (tolerance {args.tol:g})")
    return int(worst > args.tol)


if __name__ == "__main__":
    sys.exit(main())
