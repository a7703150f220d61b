"""Make a canonical Tatoeba train/dev/test split by the rules of the English-French one.

    python scripts/make_split.py ENG-XXX.tsv[.gz] OUT_DIR --target de [--withhold 0]

Rules (shared/data/tatoeba-eng-fra/split/SPLIT.md): keep the first two tab-separated columns,
strip each side, drop empty sides and exact duplicate pairs, drop pairs with a side over 30
whitespace tokens, shuffle with random.Random(1234), and draw dev and test only from pairs whose
English sentence occurs once, so no dev or test English sentence is in train. Writes gzip -9 -n
files and prints each decompressed file's lines and sha256 (for SPLIT.md).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import random
from collections import Counter
from pathlib import Path


def read_pairs(path: Path) -> list[tuple[str, str]]:
    opener = gzip.open if path.suffix == ".gz" else open
    pairs, seen = [], set()
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 2:
                continue
            en, other = cols[0].strip(), cols[1].strip()
            if not en or not other or (en, other) in seen:
                continue
            seen.add((en, other))
            if len(en.split()) > 30 or len(other.split()) > 30:
                continue
            pairs.append((en, other))
    return pairs


def split(pairs: list[tuple[str, str]], size: int, withhold: int) -> dict[str, list[tuple[str, str]]]:
    random.Random(1234).shuffle(pairs)
    n_en = Counter(en for en, _ in pairs)
    parts: dict[str, list[tuple[str, str]]] = {"test": [], "dev": [], "withheld": [], "train": []}
    for pair in pairs:
        if n_en[pair[0]] == 1:
            if len(parts["test"]) < size:
                parts["test"].append(pair)
                continue
            if len(parts["dev"]) < size:
                parts["dev"].append(pair)
                continue
            if len(parts["withheld"]) < withhold:
                parts["withheld"].append(pair)
                continue
        parts["train"].append(pair)
    return parts


def write(out: Path, name: str, lines: list[str]) -> tuple[int, str]:
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", compresslevel=9, mtime=0) as gz:
        gz.write(data)
    (out / f"{name}.gz").write_bytes(buffer.getvalue())
    return len(lines), hashlib.sha256(data).hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tsv", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--target", required=True, help="target language code for the file names (de, fr)")
    parser.add_argument("--size", type=int, default=2000, help="pairs in dev and in test")
    parser.add_argument("--withhold", type=int, default=0, help="eligible pairs kept out of every file")
    args = parser.parse_args()
    pairs = read_pairs(args.tsv)
    parts = split(pairs, args.size, args.withhold)
    args.out.mkdir(parents=True, exist_ok=True)
    train_en = set(en for en, _ in parts["train"])
    leaks = sum(en in train_en for name in ("dev", "test") for en, _ in parts[name])
    print(f"kept {len(pairs)} pairs; English of dev/test found in train: {leaks}")
    print("| file | lines | sha256 |\n| --- | ---: | --- |")
    for name in ("train", "dev", "test"):
        for side, lang in ((0, "en"), (1, args.target)):
            n, digest = write(args.out, f"{name}.{lang}", [p[side] for p in parts[name]])
            print(f"| `{name}.{lang}` | {n:,} | `{digest}` |")


if __name__ == "__main__":
    main()
