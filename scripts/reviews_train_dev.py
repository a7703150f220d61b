"""Write the shipped reviews' train + dev as one JSON Lines file (test is never read), for training the
model shipped after its recipe was chosen by cross-validation (scripts/han_cv.py) on the same rows.

    python scripts/reviews_train_dev.py runs/reviews-train-dev.jsonl
    bash scripts/train_han_ensemble.sh runs/han-final 4 --set 'data.train=[runs/reviews-train-dev.jsonl]'
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path

from attnkit.datasets import document_split
from attnkit.files import atomic_write_text


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    lines = []
    for split in ("train", "dev"):
        with gzip.open(document_split("reviews", split), "rt", encoding="utf-8") as handle:
            lines += [json.dumps(json.loads(line)) for line in handle if line.strip()]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(args.out, "\n".join(lines) + "\n")
    print(f"{len(lines)} reviews (train + dev) written to {args.out}")


if __name__ == "__main__":
    main()
