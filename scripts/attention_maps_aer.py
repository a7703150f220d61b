"""Hansards AER of every attention-derived map of a translator, choices on the trial set only.

    python scripts/attention_maps_aer.py --model enfr-transformer --hansards ../shared/data/hansards-align \
        --out docs/experiments/logs/maps-aer-enfr-transformer.json

For each method (``attnkit.names.ATTENTION_MAPS``) every choice it has (decoder layer and heads for
attention and norm, layer for value_zeroing; links read by argmax or intersect) is scored on the 37
trial sentences; the best choice per method is then scored once on the 447 test sentences, with a 95%
bootstrap interval over sentences. Prints one JSON line per trial choice and per test result.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

LINKS = ("argmax", "intersect")


def _choices(method: str, layers: int, heads: int) -> list[dict[str, Any]]:
    if method in ("rollout", "flow", "grad") or not layers:
        return [{"layer": None, "heads": None}]
    head_sets = [None] + [[h] for h in range(heads)] if method in ("attention", "norm") else [None]
    return [{"layer": layer, "heads": h} for layer in range(layers) for h in head_sets]


def _score(translator: Any, data: dict[str, Any], method: str, choice: dict[str, Any]) -> dict[str, Any]:
    from attnkit.alignment.links import aer, align, word_matrices

    start = time.perf_counter()
    mats = word_matrices(
        translator, data["src"], data["tgt"], choice["layer"], choice["heads"], scores=method
    )
    seconds = time.perf_counter() - start
    out = {}
    for link in LINKS:
        links = [align(m, link) for m in mats]
        out[link] = (aer(links, data["sure"], data["possible"]).aer, links)
    return {"seconds": seconds, "links": out}


def _read(hansards: Path, split: str) -> dict[str, Any]:
    from attnkit.alignment.links import read_naacl
    from attnkit.data.parallel import read_lines

    src = read_lines(hansards / f"{split}.en-fr.en")
    tgt = read_lines(hansards / f"{split}.en-fr.fr")
    sure, possible = read_naacl(hansards / f"{split}.en-fr.naacl", len(src))
    return {"src": src, "tgt": tgt, "sure": sure, "possible": possible}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--hansards", type=Path, required=True)
    parser.add_argument("--methods", default=None, help="comma-separated (default: all that apply)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    from attnkit.alignment.aligner import aer_interval
    from attnkit.api import load_translator
    from attnkit.names import ATTENTION_MAPS

    translator = load_translator(args.model, backend="torch", rerank=False)
    layers, heads = translator.attention_layers, translator.attention_heads
    methods = args.methods.split(",") if args.methods else list(ATTENTION_MAPS)
    if not layers:
        methods = [m for m in methods if m not in ("rollout", "flow")]
    trial, test = _read(args.hansards, "trial"), _read(args.hansards, "test")
    report: dict[str, Any] = {"model": args.model, "trial": [], "test": {}}
    for method in methods:
        rows = []
        for choice in _choices(method, layers, heads):
            scored = _score(translator, trial, method, choice)
            for link, (value, _) in scored["links"].items():
                rows.append({"method": method, **choice, "links": link, "trial_aer": round(value, 4)})
                print(json.dumps(rows[-1]), flush=True)
        report["trial"] += rows
        best = min(rows, key=lambda r: r["trial_aer"])
        scored = _score(translator, test, method, {"layer": best["layer"], "heads": best["heads"]})
        value, links = scored["links"][best["links"]]
        low, high = aer_interval(links, test["sure"], test["possible"])
        report["test"][method] = {
            **{k: best[k] for k in ("layer", "heads", "links", "trial_aer")},
            "test_aer": round(value, 4),
            "test_ci95": [round(low, 4), round(high, 4)],
            "seconds_per_sentence": round(scored["seconds"] / len(test["src"]), 4),
        }
        print(json.dumps({"test": method, **report["test"][method]}), flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
