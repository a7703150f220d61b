"""5-fold cross-validation of a HAN recipe on the shipped reviews' train + dev (test is never read).

    python scripts/han_cv.py OUT_DIR [--config configs/reviews-han.yaml] [--set key=value ...]
        [--folds 5] [--members 1] [--taus 0,0.25,0.5,0.75,1]

Folds are stratified by label (seed 13). Each fold trains the recipe on the other four folds (two runs
at a time, one thread each), averages each run's last 4 checkpoints, and classifies its held-out fold at
every prior-correction tau; the table gives accuracy and macro-F1 as mean and standard deviation over folds.
With --members K each fold trains K members (other seeds; members after the first reuse the first one's
word2vec vectors, as scripts/train_han_ensemble.sh does) and the table has a row for the ensemble of the
first m members, m = 1..K. OUT_DIR/cv.json keeps every fold's numbers. A member whose averaged checkpoint
exists is not trained again.
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


def member_dir(d: Path, m: int) -> Path:
    """Member m of fold d: the first lives in the fold's folder itself (as before --members existed)."""
    return d if m == 0 else d / f"m{m}"


def train(d: Path, m: int, config: str, seed: int, extra: list[str]) -> subprocess.Popen | None:
    md = member_dir(d, m)
    if (md / "avg4.pt").exists():
        return None
    md.mkdir(parents=True, exist_ok=True)
    sets = {
        "data.train": f"[{d / 'train.jsonl'}]",
        "data.dev": f"[{d / 'heldout.jsonl'}]",
        "training.out_dir": str(md / "run"),
        "training.seed": str(seed),
        "training.threads": "1",
        "training.progress": "false",
    }
    if m > 0:  # the fold's vocabulary and vectors are the first member's
        sets["training.word2vec_epochs"] = "0"
        sets["training.word2vec_vectors"] = str(d / "run" / "word2vec.pt")
    argv = [str(BIN / "attnkit"), "train", config] + [
        x for k, v in sets.items() for x in ("--set", f"{k}={v}")
    ]
    log = open(md / "train.log", "w")  # noqa: SIM115 (closed with the process)
    return subprocess.Popen(argv + extra, stdout=log, stderr=subprocess.STDOUT)


def average(md: Path) -> None:
    steps = sorted((md / "run").glob("step-*.pt"), key=lambda p: int(p.stem.split("-")[1]))[-4:]
    subprocess.run(
        [str(BIN / "attnkit"), "average", *map(str, steps), "--out", str(md / "avg4.pt")], check=True
    )


def train_all(dirs: list[Path], members: int, config: str, extra: list[str]) -> None:
    """Every fold's members, two one-thread runs at a time on 2 cores; first members first."""
    queue = [(d, m, 12 + i + 100 * m) for m in range(members) for i, d in enumerate(dirs)]
    queue = [job for job in queue if not (member_dir(job[0], job[1]) / "avg4.pt").exists()]
    for start in range(0, len(queue), 2):
        jobs = [(d, m, train(d, m, config, seed, extra)) for d, m, seed in queue[start : start + 2]]
        for d, m, job in jobs:
            if job is not None:
                if job.wait():
                    sys.exit(f"fold {d.name} member {m} failed: see {member_dir(d, m) / 'train.log'}")
                average(member_dir(d, m))


def ensemble(d: Path, m: int) -> Path:
    """The first m members of fold d as one checkpoint (the first member alone for m = 1)."""
    if m == 1:
        return d / "avg4.pt"
    out = d / f"ensemble{m}.pt"
    if not out.exists():
        paths = [str(member_dir(d, j) / "avg4.pt") for j in range(m)]
        subprocess.run([str(BIN / "attnkit"), "ensemble", *paths, "--out", str(out)], check=True)
    return out


def evaluate(d: Path, checkpoint: Path, taus: list[float]) -> dict[str, dict]:
    out = {}
    for tau in taus:
        clf = Classifier.from_checkpoint(checkpoint, prior_correction=tau)
        docs, _ = read_documents(d / "heldout.jsonl", labels=clf.labels)
        pred = [clf.labels.index(r.label) for r in clf.classify_documents(docs)]
        report = classification_report([x.label for x in docs], pred, len(clf.labels))
        out[str(tau)] = {"accuracy": report["accuracy"], "macro_f1": report["macro_f1"]}
    return out


def summarize(folds: dict[str, dict], taus: list[float]) -> dict[str, dict]:
    table = {}
    for tau in map(str, taus):
        acc = [f[tau]["accuracy"] for f in folds.values()]
        f1 = [f[tau]["macro_f1"] for f in folds.values()]
        table[tau] = {
            "accuracy": [round(statistics.mean(acc), 4), round(statistics.stdev(acc), 4)],
            "macro_f1": [round(statistics.mean(f1), 4), round(statistics.stdev(f1), 4)],
        }
    return table


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path)
    parser.add_argument("--config", default="configs/reviews-han.yaml")
    parser.add_argument("--set", action="append", default=[], dest="sets", metavar="KEY=VALUE")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--members", type=int, default=1)
    parser.add_argument("--taus", default="0,0.25,0.5,0.75,1")
    args = parser.parse_args()
    taus = [float(t) for t in args.taus.split(",")]
    extra = [x for s in args.sets for x in ("--set", s)]
    dirs = write_folds(args.out, records(), args.folds)
    start = time.perf_counter()
    train_all(dirs, args.members, args.config, extra)
    minutes = (time.perf_counter() - start) / 60
    report: dict = {"config": args.config, "sets": args.sets, "train_minutes": round(minutes, 1)}
    for m in range(1, args.members + 1):
        folds = {d.name: evaluate(d, ensemble(d, m), taus) for d in dirs}
        report[f"members{m}"] = {"folds": folds, "table": summarize(folds, taus)}
    (args.out / "cv.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"{args.folds}-fold CV of {args.config} {' '.join(args.sets)} ({minutes:.1f} min of training)")
    print("| members | tau | accuracy (mean ± sd) | macro-F1 (mean ± sd) |\n| ---: | ---: | ---: | ---: |")
    for m in range(1, args.members + 1):
        for tau, row in report[f"members{m}"]["table"].items():
            (a, sa), (f, sf) = row["accuracy"], row["macro_f1"]
            print(f"| {m} | {tau} | {a:.4f} ± {sa:.4f} | {f:.4f} ± {sf:.4f} |")


if __name__ == "__main__":
    main()
