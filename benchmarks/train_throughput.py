"""Training throughput, attnkit vs JoeyNMT, on the same split, subword options and model sizes, in one run.

Prints source+target tokens per second of time inside training steps (JoeyNMT's wrapper counts the
same way), the ratio, and model FLOPs utilization (MFU): FLOPs per token (counted by
torch.utils.flop_counter on a real batch, forward + backward) x tokens/s / this machine's fp32
matmul peak, measured here.

    python benchmarks/train_throughput.py --budget 120 [--peer-script ../shared/peers/run_joeynmt.sh]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch
from torch.utils.flop_counter import FlopCounterMode

from attnkit.config import load_config
from attnkit.models import build_model
from attnkit.training.trainer import Trainer
from attnkit.training.translation import TranslationTask
from peer import DEFAULT_SCRIPT, run_peer, train_stats

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = {"rnn": "tatoeba-rnn-bahdanau.yaml", "transformer": "tatoeba-transformer.yaml"}


def matmul_peak(threads: int, size: int = 2048, repeats: int = 10) -> float:
    """Measured fp32 matmul FLOP/s of this machine (best of ``repeats``)."""
    torch.set_num_threads(threads)
    a, b = torch.randn(size, size), torch.randn(size, size)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best


def flops_per_token(model: torch.nn.Module, task: TranslationTask) -> float:
    batch = next(task.batches(0, 0, 0, 1))
    with FlopCounterMode(display=False) as counter:
        loss, _, _ = task.loss(model, batch)
        loss.backward()
    model.zero_grad(set_to_none=True)
    return counter.get_total_flops() / batch.n_tokens


def ours(name: str, seconds: int, threads: int) -> dict[str, float]:
    out = tempfile.mkdtemp(prefix=f"attnkit-bench-{name}-")
    config = load_config(
        ROOT / "configs" / CONFIGS[name],
        [
            f"training.out_dir={out}",
            f"training.max_minutes={seconds / 60}",
            "training.validate_every=0",
            "training.validate_bleu=false",
            "training.dev_limit=100",
            "training.progress=false",
            f"training.threads={threads}",
        ],
    )
    torch.set_num_threads(threads)
    started = time.time()
    task = TranslationTask(config, log=lambda m: None)
    model = build_model(
        config.model, task.vocab_size, target_ids=task.target_ids, src_vocab_size=task.src_vocab_size
    )
    fpt = flops_per_token(model, task)
    trainer = Trainer(config, model, task, started=started)
    trainer.train()
    return {
        "tokens_per_second": trainer.tokens_per_second(),
        "steps": trainer.pos.step,
        "flops_per_token": fpt,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--budget", type=int, default=120, help="seconds of training per model and toolkit")
    parser.add_argument("--peer-script", type=Path, default=DEFAULT_SCRIPT)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "attnkit-joeynmt-peer")
    parser.add_argument("--venv", type=Path, help="an existing JoeyNMT venv (else the peer script makes one)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--skip-peer", action="store_true", help="reuse the peer's last stats in --work")
    args = parser.parse_args()
    steps = "split spm train" if args.venv else "venv split spm train"
    joey = (
        args.work / "joey"
        if args.skip_peer
        else run_peer(args.peer_script, args.work, steps, args.budget, args.venv)
    )
    peak = matmul_peak(args.threads)
    print(f"fp32 matmul peak measured here: {peak / 1e9:.1f} GFLOP/s ({args.threads} threads)")
    print(
        f"{'model':12s} {'JoeyNMT tok/s':>14s} {'attnkit tok/s':>14s} {'ratio':>6s} "
        f"{'MFLOP/tok':>10s} {'MFU':>6s}"
    )
    for name in CONFIGS:
        peer, mine = train_stats(joey, name), ours(name, args.budget, args.threads)
        mfu = mine["flops_per_token"] * mine["tokens_per_second"] / peak
        print(
            f"{name:12s} {peer['tokens_per_second']:14.0f} {mine['tokens_per_second']:14.0f} "
            f"{mine['tokens_per_second'] / peer['tokens_per_second']:6.2f} "
            f"{mine['flops_per_token'] / 1e6:10.1f} "
            f"{100 * mfu:5.1f}%",
            flush=True,
        )


if __name__ == "__main__":
    main()
