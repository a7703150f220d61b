"""Single-sentence latency of a translator as `attnkit translate` runs it by default, for its training report.

    python scripts/latency_json.py enfr-transformer --out runs/reports/latency-enfr-transformer.json
    python scripts/latency_json.py enfr-transformer --update   # into the shipped training_report.json

The model is loaded the way the CLI loads it (``load_translator`` with the default backend: a shipped
model whose export is int8 only runs that export torch-free), then "The cat sits on the mat." (the same
sentence in the model's source language for the reverse models) is translated 20 times after one warm-up,
at beam 1 and beam 5, without and with the model's shipped reranking (when it has one). Each entry keeps
the median and minimum milliseconds, the backend, the translation and the n-best alternatives. Time it
alone: a second job on the 2 cores doubles the numbers.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

# the tutorial's sentence, and the same sentence for the reverse models (by their source language)
SENTENCES = {"en": "The cat sits on the mat.", "fr": "Le chat est assis sur le tapis."}
SENTENCES["de"] = "Die Katze sitzt auf der Matte."
REPEATS = 20


def measure(translator: Any, beam: int) -> dict[str, Any]:
    from attnkit.cli.cmd_align import language_pair

    sentence = SENTENCES[(language_pair(translator) or ("en", ""))[0]]
    [first] = translator.translate([sentence], beam=beam, n_best=beam)  # warm-up, and what it says
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        translator.translate([sentence], beam=beam)
        times.append(1000 * (time.perf_counter() - start))
    return {
        "sentence": sentence,
        "median_ms": round(statistics.median(times), 2),
        "min_ms": round(min(times), 2),
        "translation": first.translation,
        "alternatives": list(first.alternatives),
    }


def latencies(name: str) -> dict[str, Any]:
    from attnkit.api import load_translator, runtime_int8
    from attnkit.rerank import SHIPPED

    int8 = runtime_int8(name)
    out = {}
    plain = load_translator(name, int8=int8, rerank=False)
    backend = type(plain).__name__
    for beam in (1, 5):
        out[f"{name} beam{beam}"] = {"backend": backend, "int8": int8, **measure(plain, beam)}
    if name in SHIPPED:
        reranked = load_translator(name, int8=int8, rerank=True)
        out[f"{name} beam5 reranked"] = {"backend": backend, "int8": int8, **measure(reranked, 5)}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model", help="a shipped translator's name")
    parser.add_argument("--out", type=Path, help="write the measurements here")
    parser.add_argument("--update", action="store_true", help="replace the shipped report's 'latency'")
    args = parser.parse_args()
    found = latencies(args.model)
    print(json.dumps(found, indent=1, ensure_ascii=False))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(found, indent=1, ensure_ascii=False) + "\n")
    if args.update:
        from attnkit.files import atomic_write_json
        from attnkit.pretrained import shipped

        path = shipped()[args.model].parent / "training_report.json"
        report = json.loads(path.read_text())
        if "latency" in report:
            report["latency_at_ship"] = report["latency"]  # the numbers measured when it shipped
        report["latency"] = found
        atomic_write_json(path, report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
