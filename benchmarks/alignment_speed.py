"""Word-alignment throughput: attnkit's default `attnkit align` against eflomal on the same Tatoeba
pairs, in one run, each in its own process on the same cores (issue 44's speed target).

eflomal (Östling and Tiedemann 2017; the `peers` extra) trains its model on the pairs and aligns them
(both directions, as `alignment_peers.py` runs it); attnkit reads links off its shipped translators under
forced decoding (no training): the default (grad relevance, both directions), and attention scores
(`--scores attention`). Pairs per second = pairs / wall seconds of the whole command, loading included.

    python benchmarks/alignment_speed.py [--pairs 100000] [--skip-peer]
"""

from __future__ import annotations

import argparse
import gzip
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from attnkit.datasets import parallel_split

BIN = Path(sys.executable).parent
EFLOMAL = """
import sys, eflomal
src = open(sys.argv[1], encoding="utf-8").read().splitlines()
tgt = open(sys.argv[2], encoding="utf-8").read().splitlines()
eflomal.Aligner().align(src, tgt, links_filename_fwd=sys.argv[3] + ".fwd",
                        links_filename_rev=sys.argv[3] + ".rev", quiet=True)
"""


def pairs(n: int, folder: Path) -> tuple[Path, Path]:
    """The first n Tatoeba eng-fra training pairs, one file per side."""
    paths = []
    for side in parallel_split("tatoeba-eng-fra", "train"):
        with gzip.open(side, "rt", encoding="utf-8") as f:
            lines = [next(f).rstrip("\n") for _ in range(n)]
        path = folder / Path(side).name.removesuffix(".gz")
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths[0], paths[1]


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--skip-peer", action="store_true", help="attnkit only (no eflomal installed)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src, tgt = pairs(args.pairs, Path(tmp))
        rows = {}
        if not args.skip_peer:
            rows["eflomal (train + align, both directions)"] = timed(
                [sys.executable, "-c", EFLOMAL, str(src), str(tgt), f"{tmp}/links"]
            )
        align = [str(BIN / "attnkit"), "--quiet", "align", "--src", str(src), "--tgt", str(tgt)]
        rows["attnkit align (default: grad, both directions)"] = timed(align)
        rows["attnkit align --scores attention"] = timed([*align, "--scores", "attention"])
    peer = rows.get("eflomal (train + align, both directions)")
    print(f"{args.pairs} Tatoeba eng-fra pairs, 2 cores, each command in its own process")
    print(f"{'command':<50} {'seconds':>8} {'pairs/s':>9} {'x eflomal':>10}")
    for name, seconds in rows.items():
        ratio = f"{seconds / peer:.2f}" if peer else "-"
        print(f"{name:<50} {seconds:>8.1f} {args.pairs / seconds:>9.0f} {ratio:>10}")


if __name__ == "__main__":
    main()
