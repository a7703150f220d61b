"""Train the lexical tables `attnkit align` mixes into its neural word matrices (``alignment.lexical``):
IBM Model 1 with fast_align's diagonal prior, then the HMM (``alignment.hmm``), by EM on each shipped
English-X Tatoeba training split, both directions, written as ``lexical.npz`` beside the split; then
``assets.json`` is re-made.

    python scripts/lexical_tables.py [--datasets tatoeba-eng-fra,tatoeba-eng-deu] [--iterations 5]

About 65 s and 1.6 GB of memory per language pair on 2 cores (161k pairs for English-French).
"""

from __future__ import annotations

import argparse
import gzip
import time

from attnkit import store
from attnkit.alignment import lexical
from attnkit.datasets import PARALLEL, parallel_split


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="tatoeba-eng-fra,tatoeba-eng-deu")
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--tension", type=float, default=lexical.TENSION)
    parser.add_argument("--keep", type=float, default=lexical.KEEP, help="drop entries below this")
    args = parser.parse_args()
    for name in args.datasets.split(","):
        start = time.perf_counter()
        sides = []
        for path in parallel_split(name, "train"):
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                sides.append([lexical.words(line) for line in handle])
        forward = lexical.train(sides[0], sides[1], args.iterations, args.tension, args.keep)
        backward = lexical.train(sides[1], sides[0], args.iterations, args.tension, args.keep)
        out = store.folder("datasets", PARALLEL[name][0]) / lexical.FILE
        lexical.save(out, forward, backward)
        seconds = time.perf_counter() - start
        print(f"{name}: {len(sides[0])} pairs, {len(forward.keys)} + {len(backward.keys)} entries, "
              f"{out.stat().st_size / 1e6:.1f} MB, {seconds:.0f} s -> {out}")  # fmt: skip
    store.write_index()


if __name__ == "__main__":
    main()
