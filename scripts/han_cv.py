"""5-fold cross-validation of a HAN recipe on the shipped reviews' train + dev (test is never read).

    python scripts/han_cv.py OUT_DIR [--config configs/reviews-han.yaml] [--set key=value ...]
        [--folds 5] [--taus 0,0.25,0.5,0.75,1]

Folds are stratified by label (seed 13). Each fold trains the recipe on the other four folds (two folds
at a time, one thread each), averages its last 4 checkpoints, and classifies its held-out fold at every
prior-correction tau; the table gives accuracy and macro-F1 as mean and standard deviation over folds.
OUT_DIR/cv.json keeps every fold's numbers. A fold whose averaged checkpoint exists is not trained again.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from attnkit.classifier import Classifier
from attnkit.data.documents import read_documents, stratified_folds
from attnkit.datasets import document_split
from attnkit.evaluation.classification import classification_report

BIN = Path(sys.executable).parent


def records() -> list[dict]:
    out = []
    for split in ("train", "dev"):
        with gzip.open(document_split("reviews", split), "rt", encoding="utf-8") as handle:
            out += [json.loads(line) for line in handle if line.strip()]
    return out


def write_folds(out: Path, rows: list[dict], k: int) -> list[Path]:
    folds = stratified_folds([str(r["label"]) for r in rows], k, seed=13)
    dirs = []
    for i, held in enumerate(folds):
        d = out / f"fold{i}"
        d.mkdir(parents=True, exist_ok=True)
        held_set = set(held)
        for name, inside in (("train", False), ("heldout", True)):
            lines = [json.dumps(r) for j, r in enumerate(rows) if (j in held_set) == inside]
            (d / f"{name}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        dirs.append(d)
    return dirs


def train(d: Path, config: str, seed: int, extra: list[str]) -> subprocess.Popen | None:
    if (d / "avg4.pt").exists():
        return None
    sets = {
        "data.train": f"[{d / 'train.jsonl'}]",
        "data.dev": f"[{d / 'heldout.jsonl'}]",
        "training.out_dir": str(d / "run"),
        "training.seed": str(seed),
        "training.threads": "1",
        "training.progress": "false",
    }
    argv = [str(BIN / "attnkit"), "train", config] + [
        x for k, v in sets.items() for x in ("--set", f"{k}={v}")
    ]
    log = open(d / "train.log", "w")  # noqa: SIM115 (closed with the process)
    return subprocess.Popen(argv + extra, stdout=log, stderr=subprocess.STDOUT)


def average(d: Path) -> None:
    steps = sorted((d / "run").glob("step-*.pt"), key=lambda p: int(p.stem.split("-")[1]))[-4:]
    subprocess.run(
        [str(BIN / "attnkit"), "average", *map(str, steps), "--out", str(d / "avg4.pt")], check=True
    )


def evaluate(d: Path, taus: list[float]) -> dict[str, dict]:
    out = {}
    for tau in taus:
        clf = Classifier.from_checkpoint(d / "avg4.pt", prior_correction=tau)
        docs, _ = read_documents(d / "heldout.jsonl", labels=clf.labels)
        pred = [clf.labels.index(r.label) for r in clf.classify_documents(docs)]
        report = classification_report([x.label for x in docs], pred, len(clf.labels))
        out[str(tau)] = {"accuracy": report["accuracy"], "macro_f1": report["macro_f1"]}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path)
    parser.add_argument("--config", default="configs/reviews-han.yaml")
    parser.add_argument("--set", action="append", default=[], dest="sets", metavar="KEY=VALUE")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--taus", default="0,0.25,0.5,0.75,1")
    args = parser.parse_args()
    taus = [float(t) for t in args.taus.split(",")]
    extra = [x for s in args.sets for x in ("--set", s)]
    dirs = write_folds(args.out, records(), args.folds)
    start = time.perf_counter()
    for pair in range(0, len(dirs), 2):  # two one-thread runs at a time on 2 cores
        jobs = [(d, train(d, args.config, 12 + i + pair, extra)) for i, d in enumerate(dirs[pair : pair + 2])]
        for d, job in jobs:
            if job is not None:
                if job.wait():
                    sys.exit(f"fold {d.name} failed: see {d / 'train.log'}")
                average(d)
    minutes = (time.perf_counter() - start) / 60
    folds = {d.name: evaluate(d, taus) for d in dirs}
    table = {}
    for tau in map(str, taus):
        acc = [f[tau]["accuracy"] for f in folds.values()]
        f1 = [f[tau]["macro_f1"] for f in folds.values()]
        table[tau] = {
            "accuracy": [round(statistics.mean(acc), 4), round(statistics.stdev(acc), 4)],
            "macro_f1": [round(statistics.mean(f1), 4), round(statistics.stdev(f1), 4)],
        }
    report = {"config": args.config, "sets": args.sets, "train_minutes": round(minutes, 1), "folds": folds}
    report["table"] = table
    (args.out / "cv.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"{args.folds}-fold CV of {args.config} {' '.join(args.sets)} ({minutes:.1f} min of training)")
    print("| tau | accuracy (mean ± sd) | macro-F1 (mean ± sd) |\n| ---: | ---: | ---: |")
    for tau, row in table.items():
        (a, sa), (f, sf) = row["accuracy"], row["macro_f1"]
        print(f"| {tau} | {a:.4f} ± {sa:.4f} | {f:.4f} ± {sf:.4f} |")


if __name__ == "__main__":
    main()
