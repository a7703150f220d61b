"""Guided alignment after adaptation (issue 44): teach each adapted translator's attention the links both
directions agree on, then align; every choice on the 37-sentence trial set.

    python scripts/align_guided.py OUT --hansards DIR --forward F.pt --reverse R.pt \
        [--steps 100,200] [--weights 0.5,1.0] [--test]

F.pt / R.pt: the adapted enfr-rnn / fren-rnn (scripts/align_adapt.py). The teacher: their links on the
trial + test sentence pairs (mean symmetrization, intersect; no gold read). For each weight, both
directions are fine-tuned (translation loss + weight x guided cross-entropy), a checkpoint at each step
count is scored on trial; --test scores the trial's best on the test set once. OUT/report.json keeps it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import attnkit
from attnkit.align_training import guided_finetune, guides
from attnkit.alignment.links import read_naacl
from attnkit.api import load_translator


def read(hansards: Path, split: str) -> tuple[list[str], list[str]]:
    return tuple(  # type: ignore[return-value]
        [line.strip() for line in (hansards / f"{split}.en-fr.{x}").read_text().splitlines()]
        for x in ("en", "fr")
    )


def aer(forward: str, reverse: str, hansards: Path, split: str) -> dict:
    en, fr = read(hansards, split)
    gold = read_naacl(
        str(hansards / f"{split}.en-fr.naacl"),
        len(en),
        [(len(a.split()), len(b.split())) for a, b in zip(en, fr)],
    )
    report = attnkit.align(
        en,
        fr,
        forward,
        reverse,
        scores="attention",
        method="intersect",
        symmetrize="mean",
        gold=gold,
        backend="torch",
    )
    return {**report.summary(), "interval": [round(x, 4) for x in report.interval()]}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path)
    parser.add_argument("--hansards", type=Path, required=True)
    parser.add_argument("--forward", required=True)
    parser.add_argument("--reverse", required=True)
    parser.add_argument("--steps", default="100,200")
    parser.add_argument("--weights", default="0.5,1.0")
    parser.add_argument("--test", action="store_true")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    steps = [int(s) for s in args.steps.split(",")]
    en, fr = (a + b for a, b in zip(read(args.hansards, "trial"), read(args.hansards, "test")))
    teacher = attnkit.align(
        en,
        fr,
        args.forward,
        args.reverse,
        scores="attention",
        method="intersect",
        symmetrize="mean",
        backend="torch",
    )
    links = teacher.links
    rows = [{"weight": 0, "steps": 0, "trial": aer(args.forward, args.reverse, args.hansards, "trial")}]
    print(json.dumps(rows[-1]), flush=True)
    for weight in [float(w) for w in args.weights.split(",")]:
        paths = {}
        for name, ckpt, s, t, found in (
            ("fwd", args.forward, en, fr, links),
            ("rev", args.reverse, fr, en, [{(b, a) for a, b in x} for x in links]),
        ):
            start, done = time.perf_counter(), 0
            translator = load_translator(ckpt, backend="torch", rerank=False)
            data = guides(translator, s, t, found)
            for n in steps:
                path = args.out / f"{name}-w{weight}-s{n}.pt"
                guided_finetune(translator, ckpt, data, n - done, path, weight=weight)
                done, paths[(name, n)] = n, str(path)
            print(f"{name} weight {weight}: {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
        for n in steps:
            rows.append(
                {
                    "weight": weight,
                    "steps": n,
                    "trial": aer(paths[("fwd", n)], paths[("rev", n)], args.hansards, "trial"),
                }
            )
            print(json.dumps(rows[-1]), flush=True)
    best = min(rows, key=lambda r: r["trial"]["aer"])
    report = {"trial": rows, "chosen": {"weight": best["weight"], "steps": best["steps"]}}
    if args.test:
        chosen = (
            args.out / f"fwd-w{best['weight']}-s{best['steps']}.pt",
            args.out / f"rev-w{best['weight']}-s{best['steps']}.pt",
        )
        pair = (args.forward, args.reverse) if best["steps"] == 0 else tuple(map(str, chosen))
        report["test"] = aer(*pair, args.hansards, "test")
        print("test", json.dumps(report["test"]))
    (args.out / "report.json").write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
