"""Decoding-level check of every attention map: does it point at the source word whose erasure changes
the output token most? (``attnkit.evaluation.map_erasure``)

    python scripts/attention_maps_erasure.py --model enfr-transformer --limit 300 \
        --out docs/experiments/logs/maps-erasure-enfr-transformer.json

Sources: the first ``--limit`` sentences of the shipped English-French dev split; targets: the model's own
beam-5 translations (torch), forced. No choice is made on these numbers (each map at its trial choice of
layer from scripts/attention_maps_aer.py, given with --layers METHOD=LAYER,...).
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--limit", type=int, default=300)
    parser.add_argument("--layers", default="", help="METHOD=LAYER,... (the trial set's choices)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    from attnkit.api import load_translator
    from attnkit.datasets import parallel_split
    from attnkit.evaluation.map_erasure import erasure_agreement
    from attnkit.explain.saliency import saliency_maps
    from attnkit.explain.translator_maps import translator_maps
    from attnkit.names import ATTENTION_MAPS

    translator = load_translator(args.model, backend="torch", rerank=False)
    with gzip.open(parallel_split("tatoeba-eng-fra", "dev")[0], "rt", encoding="utf-8") as handle:
        sources = [line.strip() for _, line in zip(range(args.limit), handle)]
    targets = [r.translation for r in translator.translate(sources, beam=5)]
    layers = dict((k, int(v)) for k, v in (p.split("=") for p in args.layers.split(",") if p))
    methods = [m for m in ATTENTION_MAPS if translator.attention_layers or m not in ("rollout", "flow")]
    maps, seconds = {}, {}
    for method in methods:
        start = time.perf_counter()
        maps[method] = translator_maps(translator, sources, targets, method, layers.get(method))
        seconds[method] = round((time.perf_counter() - start) / len(sources), 4)
    start = time.perf_counter()
    maps["saliency"] = saliency_maps(translator, sources, targets)
    seconds["saliency"] = round((time.perf_counter() - start) / len(sources), 4)
    report = erasure_agreement(translator, sources, targets, maps)
    report.update({"model": args.model, "layers": layers, "seconds_per_sentence": seconds})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")
    for name, entry in report["methods"].items():
        print(
            f"{name:<14} top1 {entry['top1']}  drop ratio {entry['drop_ratio']}  {seconds[name]} s/sentence"
        )
    print(f"chance {report['chance']} over {report['n_sentences']} sentences")


if __name__ == "__main__":
    main()
