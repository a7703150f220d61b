"""Decoding speed and memory, attnkit vs JoeyNMT, on the 2,000 test sentences, in one run.

attnkit (float32 weights, and int8 weights with --int8): batched throughput (batch 64, beam 5 and
greedy), single-sentence latency with the model loaded (median of 20), and whole-process peak RSS of
`attnkit translate "The cat sits on the mat."` (the child's own VmHWM: getrusage's ru_maxrss would also
count the pages of this benchmark process that the child shared between fork and exec).
JoeyNMT: the peer's own joey_eval.py (written by ../shared/peers/run_joeynmt.sh) on a JoeyNMT
model trained by that script (run benchmarks/train_throughput.py first, same --work).

    python benchmarks/translate_speed.py [--model enfr-rnn] [--work DIR] [--skip-peer]
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from attnkit.api import load_translator
from attnkit.datasets import parallel_split
from peer import peer_python

SENTENCE = "The cat sits on the mat."


def latency_ms(translator, beam: int, repeats: int = 20) -> float:  # type: ignore[no-untyped-def]
    translator.translate([SENTENCE], beam=beam)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        translator.translate([SENTENCE], beam=beam)
        times.append(1000 * (time.perf_counter() - start))
    return statistics.median(times)


CHILD = """import resource, sys
from attnkit.cli.main import main
code = main(sys.argv[1:])
try:
    hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
except OSError:
    hwm = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print("PEAK_KB", hwm, file=sys.stderr)
sys.exit(code)
"""


def whole_process_rss(model: str | None, int8: bool) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one `attnkit translate SENTENCE` process."""
    args = ["translate", SENTENCE] + (["--model", model] if model else []) + (["--int8"] if int8 else [])
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, *args], check=True, capture_output=True, text=True)
    peak_kb = int(done.stderr.rsplit("PEAK_KB", 1)[1].split()[0])
    return time.perf_counter() - start, peak_kb / 1024


def ours(model: str | None, threads: int, int8: bool = False) -> dict[str, float]:
    torch.set_num_threads(threads)
    with gzip.open(parallel_split("tatoeba-eng-fra", "test")[0], "rt", encoding="utf-8") as handle:
        sources = handle.read().splitlines()
    translator = load_translator(model, int8=int8)
    out: dict[str, float] = {}
    for name, beam in (("beam5", 5), ("greedy", 1)):
        start = time.perf_counter()
        translator.translate(sources, beam=beam, batch_size=64)
        out[f"{name}_sent_per_s"] = len(sources) / (time.perf_counter() - start)
        out[f"latency_{name}_ms"] = latency_ms(translator, beam)
    out["process_seconds"], out["process_rss_mb"] = whole_process_rss(model, int8)
    return out


def peer(work: Path, venv: Path | None, checkpoint: str) -> dict[str, float]:
    joey = work / "joey"
    result = joey / "runs" / "bench.eval.json"
    subprocess.run(
        [peer_python(work, venv), "joey_eval.py", "models/rnn", checkpoint, "data/split", str(result)],
        cwd=joey,
        check=True,
        capture_output=True,
    )
    data = json.loads(result.read_text())
    return {
        "beam5_sent_per_s": data["beam5"]["sent_per_s"],
        "greedy_sent_per_s": data["greedy"]["sent_per_s"],
        "latency_beam5_ms": data["latency_beam5_ms"]["median"],
        "latency_greedy_ms": data["latency_greedy_ms"]["median"],
        "eval_rss_mb": data["maxrss_mib"],
        "test_bleu_beam5": data["beam5"]["bleu"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", help="attnkit checkpoint or shipped model (default: shipped)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "attnkit-joeynmt-peer")
    parser.add_argument("--venv", type=Path)
    parser.add_argument("--joey-checkpoint", default="latest.ckpt")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--skip-peer", action="store_true")
    args = parser.parse_args()
    mine = {"fp32": ours(args.model, args.threads), "int8": ours(args.model, args.threads, int8=True)}
    theirs = {} if args.skip_peer else peer(args.work, args.venv, args.joey_checkpoint)
    print(f"{'RNN, 2,000 test sentences':22s} {'fp32':>8s} {'int8':>8s} {'JoeyNMT':>8s}  ratios fp32 / int8")
    for key, higher_better in (
        ("beam5_sent_per_s", True),
        ("greedy_sent_per_s", True),
        ("latency_greedy_ms", False),
        ("latency_beam5_ms", False),
    ):
        a, q, j = mine["fp32"][key], mine["int8"][key], theirs.get(key, float("nan"))
        ratios = [(x / j if higher_better else j / x) for x in (a, q)]
        print(f"{key:22s} {a:8.1f} {q:8.1f} {j:8.1f}  {ratios[0]:5.2f} / {ratios[1]:5.2f}")
    for kind, row in mine.items():
        print(
            f"whole-process `attnkit translate` ({kind}): {row['process_seconds']:.2f} s, "
            f"peak RSS {row['process_rss_mb']:.0f} MB"
        )
    if theirs:
        print(
            f"JoeyNMT evaluation process peak RSS {theirs['eval_rss_mb']:.0f} MB; "
            "its model's test BLEU (beam 5) "
            f"{theirs['test_bleu_beam5']} (a briefly trained peer decodes longer outputs: see README)"
        )


if __name__ == "__main__":
    main()
