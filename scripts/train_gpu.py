"""Train, average and choose on dev in one command; the same on a GPU and a CPU.

    python scripts/train_gpu.py OUT CONFIG [CONFIG ...] [--variant NAME:KEY=VALUE[,KEY=VALUE]] \
        [--minutes M] [--steps N] [--sequential] [--average K] [--device auto]

Every config x variant trains in its own process, all at once (small models leave a GPU mostly idle,
so several share it well), or one after another with ``--sequential``. ``--steps N`` trains exactly N
updates with the full linear decay (warmup, then lr to 0 at N; ``--minutes`` is then only a safety cap),
so a run is never cut before its schedule ends. The retraining of enfr-transformer in one process:

    python scripts/train_gpu.py runs/gpu enfr-transformer --steps 1800 --minutes 11 --sequential --average 5
 Then each run's last K step checkpoints are averaged, greedy dev BLEU of
its best and its averaged checkpoint is measured, and per config the checkpoint with the highest dev
BLEU (never test) is written as ``OUT/NAME.pt`` (fp16 weights, inference only) with ``OUT/summary.json``.
``--smoke`` runs the same path at tiny size (a few steps, a few thousand pairs) to test it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import torch

from attnkit.checkpoint import inference_payload, load_checkpoint, save_payload, step_checkpoints
from attnkit.config import load_config
from attnkit.data.parallel import read_parallel
from attnkit.datasets import parallel_split
from attnkit.evaluation.metrics import corpus_scores
from attnkit.training.average import average_checkpoints
from attnkit.translator import Translator

SMOKE = [
    "training.max_steps=24",
    "training.validate_every=8",
    "data.train_limit=3000",
    "data.vocab_size=500",
    "data.max_tokens=2000",
    "training.dev_limit=50",
    "training.warmup_steps=5",
    "training.precision=fp32",  # bf16 autocast crawls on a CPU without bf16 units (AVX2)
    "model.transformer.d_model=64",
    "model.transformer.ff_size=128",
    "model.transformer.encoder_layers=2",
]


def parse_variant(text: str) -> tuple[str, list[str]]:
    name, _, sets = text.partition(":")
    if not name or not sets:
        raise SystemExit(f"--variant expects NAME:KEY=VALUE[,KEY=VALUE], got {text!r}")
    return name, sets.split(",")


def launch(out: Path, config: str, variant: str, sets: list[str], args: argparse.Namespace) -> tuple:
    name = load_config(config).name + (f"-{variant}" if variant else "")
    run_dir = out / "runs" / name
    run_dir.mkdir(parents=True, exist_ok=True)
    overrides = [f"training.out_dir={run_dir}", f"training.max_minutes={args.minutes}"]
    if args.steps:  # the whole linear decay, however long it takes within the --minutes cap
        overrides += ["training.schedule=linear", f"training.max_steps={args.steps}"]
    overrides += [f"training.device={args.device}"] + sets + (SMOKE if args.smoke else [])
    start = args.init_dir / f"{load_config(config).name}.pt" if args.init_dir else None
    if start is not None and start.exists():  # continue from an earlier run's weights (fresh optimizer)
        overrides.append(f"training.init_from={start}")
    cmd = [sys.executable, "-m", "attnkit", "train", config] + [a for s in overrides for a in ("--set", s)]
    log = (run_dir / "train.log").open("w")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return name, config, run_dir, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)


def dev_bleu(path: Path, device: str, dataset: str, limit: int) -> float:
    translator = Translator.from_checkpoint(path, device=device)
    src, ref = read_parallel(*parallel_split(dataset, "dev"))
    src, ref = (src[:limit], ref[:limit]) if limit else (src, ref)
    hyps = [t.translation for t in translator.translate(src, beam=1, batch_size=200)]
    return round(corpus_scores(hyps, ref).bleu, 2)


def evaluate_run(name: str, config: str, run_dir: Path, args: argparse.Namespace) -> dict:
    dataset = load_config(config).data.dataset
    limit = 50 if args.smoke else 0
    candidates = {"best": run_dir / "best.pt"}
    steps = step_checkpoints(run_dir)[-args.average :]
    if len(steps) >= 2:
        average_checkpoints(steps, run_dir / "averaged.pt")
        candidates["averaged"] = run_dir / "averaged.pt"
    scores = {k: dev_bleu(p, args.device, dataset, limit) for k, p in candidates.items() if p.exists()}
    print(f"{name}: greedy dev BLEU {scores}", flush=True)
    return {"name": name, "config": config, "dir": str(run_dir), "dev_bleu_greedy": scores}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("configs", nargs="+")
    parser.add_argument("--variant", action="append", default=[], help="NAME:KEY=VALUE[,KEY=VALUE]")
    parser.add_argument("--minutes", type=float, default=5.5, help="wall-clock budget of each run")
    parser.add_argument("--steps", type=int, default=0, help="exactly this many updates, linear decay to 0")
    parser.add_argument("--sequential", action="store_true", help="one training process at a time")
    parser.add_argument("--average", type=int, default=5, help="average this many last checkpoints")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument(
        "--init-dir", type=Path, help="start each config NAME from DIR/NAME.pt when it exists"
    )
    args = parser.parse_args()
    started = time.time()
    variants = [parse_variant(v) for v in args.variant] or [("", [])]
    jobs, failed = [], []
    for c in args.configs:
        for v, s in variants:
            jobs.append(launch(args.out, c, v, s, args))
            if args.sequential and jobs[-1][3].wait() != 0:
                failed.append(jobs[-1][0])
    failed += [name for name, _, _, proc in jobs if not args.sequential and proc.wait() != 0]
    for name, _, run_dir, _ in jobs:
        print(
            f"--- {name} (last lines of train.log)\n"
            + "".join((run_dir / "train.log").open().readlines()[-4:])
        )
    if failed:
        print(f"failed runs: {failed}", file=sys.stderr)
        return 1
    results = [evaluate_run(n, c, d, args) for n, c, d, _ in jobs]
    chosen = {}
    for config in args.configs:
        runs = [r for r in results if r["config"] == config]
        score, run, kind = max((s, r, k) for r in runs for k, s in r["dev_bleu_greedy"].items())
        ckpt = load_checkpoint(Path(run["dir"]) / f"{kind}.pt")
        target = args.out / f"{load_config(config).name}.pt"
        save_payload(inference_payload(ckpt), target)
        chosen[config] = {
            "run": run["name"],
            "checkpoint": kind,
            "dev_bleu_greedy": score,
            "file": str(target),
        }
        print(f"chosen for {config}: {run['name']} {kind} (greedy dev BLEU {score}) -> {target}", flush=True)
    hardware = torch.cuda.get_device_name() if torch.cuda.is_available() else "CPU"
    summary = {
        "hardware": hardware,
        "wall_minutes": round((time.time() - started) / 60, 2),
        "runs": results,
        "chosen": chosen,
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
