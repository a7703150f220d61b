"""torch fp32, torch int8, ONNX fp32 and ONNX int8 in one run: speed, memory and agreement.

On the 2,000 canonical test sentences (batch 64, beam 5) and on the tutorial's sentence (model loaded,
median of --repeats, greedy and beam 5), plus whole-process `attnkit translate` / `attnkit classify`
(median of 5, the child's own VmHWM). Ratios are to the torch fp32 path of the same run; JoeyNMT's
numbers are the peer file's (../shared/peers/joeynmt-baseline.md, its RNN, same machine type and split).
Agreement: identical translations vs torch fp32, BLEU difference, max attention difference; the HAN's
labels and probabilities on the review test split.

    python benchmarks/runtime_speed.py [--model enfr-rnn] [--classifier reviews-han] [--out FILE]
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
from typing import Any

import numpy as np
import torch

from attnkit.api import load_classifier, load_translator
from attnkit.data.documents import read_documents
from attnkit.datasets import document_split, parallel_split
from attnkit.evaluation.metrics import corpus_scores
from attnkit.export import export
from attnkit.pretrained import find_export

SENTENCE = "The cat sits on the mat."
REVIEW = "Runs small. Returned it."
# JoeyNMT 2.3.0 RNN, ../shared/peers/joeynmt-baseline.md (measured 2026-12-02 on the same machine type)
JOEYNMT = {
    "beam5_sent_per_s": 81.9,
    "latency_greedy_ms": 25.3,
    "latency_beam5_ms": 45.1,
    "process_seconds": 3.70,
    "process_rss_mb": 365 * 1.048576,
}
CHILD = """import sys
from attnkit.cli.main import main
code = main(sys.argv[1:])
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
print("PEAK_KB", hwm, file=sys.stderr)
sys.exit(code)
"""


def latency_ms(translator: Any, beam: int, repeats: int) -> float:
    translator.translate([SENTENCE], beam=beam)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        translator.translate([SENTENCE], beam=beam)
        times.append(1000 * (time.perf_counter() - start))
    return statistics.median(times)


def whole_process(args: list[str], runs: int = 5) -> tuple[float, float]:
    """Median wall seconds and peak RSS (MB) of `attnkit ARGS` processes."""
    walls, peaks = [], []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", CHILD, *args], check=True, capture_output=True, text=True
        )
        walls.append(time.perf_counter() - start)
        peaks.append(int(done.stderr.rsplit("PEAK_KB", 1)[1].split()[0]) / 1024)
    return statistics.median(walls), statistics.median(peaks)


def translators(model: str, folder: Path) -> dict[str, Any]:
    return {
        "torch fp32": load_translator(model, backend="torch", rerank=False),
        "torch int8": load_translator(model, int8=True, backend="torch", rerank=False),
        "onnx fp32": load_translator(str(folder), backend="onnx"),
        "onnx int8": load_translator(str(folder), int8=True, backend="onnx"),
    }


def measure(translator: Any, sources: list[str], references: list[str], repeats: int) -> dict[str, Any]:
    start = time.perf_counter()
    results = translator.translate(sources, beam=5, batch_size=64)
    seconds = time.perf_counter() - start
    scores = corpus_scores([r.translation for r in results], references)
    return {
        "beam5_sent_per_s": len(sources) / seconds,
        "latency_greedy_ms": latency_ms(translator, 1, repeats),
        "latency_beam5_ms": latency_ms(translator, 5, repeats),
        "bleu": scores.bleu,
        "chrf": scores.chrf,
        "results": results,
    }


def agreement(reference: list[Any], other: list[Any]) -> dict[str, float]:
    same = [a.translation == b.translation for a, b in zip(reference, other)]
    diffs = [float(np.abs(a.attention - b.attention).max()) for a, b, s in zip(reference, other, same) if s]
    return {"same_translations": sum(same) / len(same), "max_attention_diff": max(diffs, default=0.0)}


def classifier_rows(name: str) -> dict[str, Any]:
    docs, _ = read_documents(document_split("reviews", "test"), labels=load_classifier(name).labels)
    out = {}
    for backend in ("torch", "onnx"):
        classifier = load_classifier(name, backend=backend)
        start = time.perf_counter()
        results = classifier.classify_documents(docs)
        out[backend] = {"docs_per_s": len(docs) / (time.perf_counter() - start), "results": results}
    a, b = out["torch"]["results"], out["onnx"]["results"]
    prob = max(abs(x.probabilities[c] - y.probabilities[c]) for x, y in zip(a, b) for c in x.probabilities)
    return {
        "n_documents": len(docs),
        "same_labels": sum(x.label == y.label for x, y in zip(a, b)) / len(a),
        "max_probability_diff": prob,
        "docs_per_s": {k: v["docs_per_s"] for k, v in out.items()},
        "process": {k: whole_process(["classify", REVIEW, "--backend", k]) for k in ("onnx", "torch")},
    }


def report(model: str, rows: dict[str, dict[str, Any]], process: dict[str, Any], han: dict[str, Any]) -> None:
    base = rows["torch fp32"]
    print(f"\n{model}: 2,000 test sentences (batch 64, beam 5) and {SENTENCE!r} (model loaded)")
    print(
        f"{'':12s} {'beam5 sent/s':>13s} {'greedy ms':>10s} {'beam5 ms':>9s} {'BLEU':>6s} {'same':>7s}"
        f" {'att diff':>9s}  ratios to torch fp32 (throughput, greedy, beam latency)"
    )
    for name, row in {**rows, "JoeyNMT": JOEYNMT}.items():
        ratios = (
            row["beam5_sent_per_s"] / base["beam5_sent_per_s"],
            base["latency_greedy_ms"] / row["latency_greedy_ms"],
            base["latency_beam5_ms"] / row["latency_beam5_ms"],
        )
        same = row.get("same_translations", float("nan"))
        print(
            f"{name:12s} {row['beam5_sent_per_s']:13.1f} {row['latency_greedy_ms']:10.2f}"
            f" {row['latency_beam5_ms']:9.2f} {row.get('bleu', float('nan')):6.2f} {same:7.2%}"
            f" {row.get('max_attention_diff', float('nan')):9.1e}  " + " ".join(f"{r:.2f}x" for r in ratios)
        )
    print("\nwhole process (median of 5): wall s, peak RSS MB")
    for name, (wall, rss) in process.items():
        print(f"  attnkit translate --backend {name:6s} {wall:5.2f} s {rss:6.1f} MB")
    joey = f"{JOEYNMT['process_seconds']:5.2f} s {JOEYNMT['process_rss_mb']:6.1f} MB"
    print(f"  JoeyNMT translate (peer file)     {joey}")
    for name, (wall, rss) in han["process"].items():
        print(f"  attnkit classify --backend {name:6s}  {wall:5.2f} s {rss:6.1f} MB")
    print(
        f"\nHAN on {han['n_documents']} test reviews: same labels {han['same_labels']:.2%}, max probability"
        f" difference {han['max_probability_diff']:.1e}; docs/s torch {han['docs_per_s']['torch']:.0f},"
        f" onnx {han['docs_per_s']['onnx']:.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="enfr-rnn")
    parser.add_argument("--classifier", default="reviews-han")
    parser.add_argument("--dataset", default="tatoeba-eng-fra")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--out", type=Path, help="write the numbers as JSON")
    args = parser.parse_args()
    torch.set_num_threads(2)
    src, ref = parallel_split(args.dataset, "test")
    sources, references = (gzip.decompress(p.read_bytes()).decode("utf-8").splitlines() for p in (src, ref))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "export"
        export(args.model, folder, int8=True)  # fp32 graphs as shipped, plus int8 ones
        rows = {
            k: measure(t, sources, references, args.repeats)
            for k, t in translators(args.model, folder).items()
        }
    for row in rows.values():
        row.update(agreement(rows["torch fp32"]["results"], row["results"]))
    shipped = find_export(args.model) is not None
    backends = ("onnx", "torch") if shipped else ("torch",)
    process = {
        b: whole_process(["translate", SENTENCE, "--model", args.model, "--backend", b]) for b in backends
    }
    han = classifier_rows(args.classifier)
    report(args.model, rows, process, han)
    if args.out:
        clean = {k: {m: v for m, v in r.items() if m != "results"} for k, r in rows.items()}
        args.out.write_text(json.dumps({"translator": clean, "process": process, "han": han}, indent=2))


if __name__ == "__main__":
    main()
