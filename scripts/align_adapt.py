"""Adapt both shipped RNN translators to the Hansards bitext, then align with them (issue 18).

    python scripts/align_adapt.py OUT_DIR --hansards DIR [--steps 25,50,100,200] [--lr 0.0003]

Statistical aligners (fast_align, GIZA++, eflomal) are trained on the very sentences they align; the
Tatoeba translators have never seen parliamentary text. This script does the same for attnkit without
touching a gold link: it fine-tunes ``enfr-rnn`` (English->French) and ``fren-rnn`` (French->English) on
the trial + test sentence pairs as plain parallel text (``training.init_from``, one thread each, side by
side), keeps a checkpoint every few steps, scores each pair of checkpoints with
``attnkit align --reverse-model ... --symmetrize mean --method intersect`` on the 37 trial sentences,
and evaluates the test set once, with the step chosen on trial. OUT_DIR/report.json keeps every number.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent
DIRECTIONS = {"enfr": ("enfr-rnn", "en", "fr"), "fren": ("fren-rnn", "fr", "en")}


def bitext(out: Path, hansards: Path) -> dict[str, Path]:
    """trial + test sentences, one file per language (the trailing spaces of the gold files dropped)."""
    paths = {}
    for lang in ("en", "fr"):
        lines = []
        for split in ("trial", "test"):
            text = (hansards / f"{split}.en-fr.{lang}").read_text(encoding="utf-8")
            lines += [line.strip() for line in text.splitlines()]
        paths[lang] = out / f"bitext.{lang}"
        paths[lang].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths


def finetune(out: Path, name: str, src: Path, tgt: Path, dev: list[Path], args: argparse.Namespace):
    """``attnkit train`` from the shipped model ``name``'s recipe and weights (``adaptation_config``, the
    setup of ``attnkit align --adapt``), with a checkpoint every min(--steps) steps, on one thread."""
    from attnkit.config import to_dict
    from attnkit.training.adapt import adaptation_config

    config = adaptation_config(
        name, [src, tgt], max(args.steps), out / name, args.lr, dev, checkpoint_every=min(args.steps)
    )
    config.name, config.training.threads = f"{name}-hansards", 1
    path = out / f"{name}.json"
    path.write_text(json.dumps(to_dict(config), indent=2))  # JSON is YAML
    log = open(out / f"{name}.log", "w")  # noqa: SIM115 (closed with the process)
    return subprocess.Popen([str(BIN / "attnkit"), "train", str(path)], stdout=log, stderr=subprocess.STDOUT)


def aer(forward: str, reverse: str, hansards: Path, split: str, scores: str = "attention") -> dict:
    """``attnkit align`` with the method chosen before (mean of both directions, intersect)."""
    argv = [str(BIN / "attnkit"), "--quiet", "align", "--model", forward, "--reverse-model", reverse]
    argv += ["--symmetrize", "mean", "--method", "intersect", "--backend", "torch", "--json"]
    argv += ["--scores", scores]
    files = [hansards / f"{split}.en-fr.{x}" for x in ("en", "fr", "naacl")]
    argv += ["--src", str(files[0]), "--tgt", str(files[1]), "--gold", str(files[2])]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def checkpoints(out: Path, step: int) -> tuple[str, str]:
    if step == 0:
        return "enfr-rnn", "fren-rnn"
    return tuple(str(out / name / f"step-{step}.pt") for name in ("enfr-rnn", "fren-rnn"))  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path)
    parser.add_argument("--hansards", type=Path, required=True)
    parser.add_argument("--steps", default="25,50,100,200")
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--scores", default="attention", help="attention or grad (read on trial)")
    parser.add_argument("--trial-only", action="store_true", help="choose on trial; never read test")
    args = parser.parse_args()
    args.steps = [int(s) for s in args.steps.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)
    text = bitext(args.out, args.hansards)
    trial = {lang: args.hansards / f"trial.en-fr.{lang}" for lang in ("en", "fr")}
    start = time.perf_counter()
    jobs = [
        finetune(args.out, name, text[s], text[t], [trial[s], trial[t]], args)
        for name, s, t in DIRECTIONS.values()
    ]
    if any(job.wait() for job in jobs):
        sys.exit(f"fine-tuning failed: see {args.out}/*.log")
    minutes = (time.perf_counter() - start) / 60
    rows = [
        {"step": s, "trial": aer(*checkpoints(args.out, s), args.hansards, "trial", args.scores)}
        for s in [0, *args.steps]
    ]
    for row in rows:
        print(f"step {row['step']}: trial AER {row['trial']['aer']}", flush=True)
    best = min(rows, key=lambda r: r["trial"]["aer"])
    if args.trial_only:
        return
    test = aer(*checkpoints(args.out, best["step"]), args.hansards, "test", args.scores)
    report = {"lr": args.lr, "finetune_minutes": round(minutes, 2), "trial": rows}
    report.update(chosen_step=best["step"], test=test)
    (args.out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    chosen = f"chosen on trial: step {best['step']}; test AER {test['aer']}"
    print(f"{chosen} (precision {test['precision']}, recall {test['recall']})")


if __name__ == "__main__":
    main()
