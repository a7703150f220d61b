"""Sentence pairs per second of `attnkit align` on Ray Data with 1 and 2 workers, against the single
process, on the same Tatoeba pairs in one run (issue 44), and whether the outputs are byte-identical.

Each command runs in its own process on this machine; `--engine ray` starts a local Ray instance with
`--workers N` (one CPU, one model copy and one torch thread each). Wall seconds include loading the
models (and starting Ray): the cost a user pays.

    python benchmarks/ray_scale.py [--pairs 2000] [--task align|translate]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from attnkit.datasets import parallel_split

BIN = Path(sys.executable).parent


def pairs(n: int, folder: Path) -> list[Path]:
    """The first n Tatoeba eng-fra training pairs, one file per side."""
    paths = []
    for side in parallel_split("tatoeba-eng-fra", "train"):
        with gzip.open(side, "rt", encoding="utf-8") as f:
            lines = [line.rstrip("\n") for _, line in zip(range(n), f)]
        paths.append(folder / Path(side).name.removesuffix(".gz"))
        paths[-1].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths


def run(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, check=True, capture_output=True, env=env)
    return time.perf_counter() - start, hashlib.sha256(done.stdout).hexdigest()[:12]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--task", choices=("align", "translate"), default="align")
    args = parser.parse_args()
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    with tempfile.TemporaryDirectory() as tmp:
        src, tgt = pairs(args.pairs, Path(tmp))
        if args.task == "align":
            base = [str(BIN / "attnkit"), "--quiet", "align", "--src", str(src), "--tgt", str(tgt)]
        else:
            base = [str(BIN / "attnkit"), "--quiet", "translate", "--model", "enfr-rnn", str(src)]
            base = [*base[:-1], "--beam", "5"]
        stdin = None if args.task == "align" else src
        rows = {}
        for name, extra, threads in [
            ("single process (2 torch threads)", [], "2"),
            ("single process (1 torch thread)", [], "1"),
            ("ray, 1 worker", ["--engine", "ray", "--workers", "1", "--shard-size", "256"], "2"),
            ("ray, 2 workers", ["--engine", "ray", "--workers", "2", "--shard-size", "256"], "2"),
        ]:
            argv = [*base, *extra]
            if stdin is not None:
                argv = ["sh", "-c", " ".join(argv) + f" < {stdin}"]
            rows[name] = run(argv, {**env, "OMP_NUM_THREADS": threads})
    single = rows["single process (2 torch threads)"][0]
    print(f"attnkit {args.task}: {args.pairs} Tatoeba eng-fra pairs, {os.cpu_count()} cores, one run")
    print(f"{'how':<36} {'seconds':>8} {'pairs/s':>8} {'x single':>9} {'output sha256':>14}")
    for name, (seconds, digest) in rows.items():
        print(
            f"{name:<36} {seconds:>8.1f} {args.pairs / seconds:>8.1f} {single / seconds:>9.2f} {digest:>14}"
        )
    one, two = rows["ray, 1 worker"][0], rows["ray, 2 workers"][0]
    print(f"2 workers / 1 worker: {one / two:.2f}x")


if __name__ == "__main__":
    main()
