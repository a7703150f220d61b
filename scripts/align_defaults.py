"""Choose `attnkit align`'s default on the Hansards trial set, then score test once.

    python scripts/align_defaults.py --hansards ../shared/data/hansards-align \
        --out docs/experiments/logs/align-defaults.json
    python scripts/align_defaults.py --hansards ../shared/data/hansards-align --model enfr-transformer \
        --scores attention,grad,norm --out docs/experiments/logs/align-defaults-transformer.json

Settings: the scores links are read from (the attention, or Chefer et al.'s gradient-weighted relevance,
``--scores grad``, ...) x one direction (--model) or both (with --reverse-model, every symmetrization) x
argmax or intersect links. Each is scored on the 37 trial sentences; the best is scored on the 447 test
sentences, beside the previous default (attention, mean, intersect).
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path
from typing import Any

COMBINE = ("one direction", "mean", "grow-diag", "grow-diag-final", "intersection", "union")
LINKS = ("argmax", "intersect")
PREVIOUS = {"scores": "attention", "combine": "mean", "links": "intersect"}


def _read(hansards: Path, split: str) -> dict[str, Any]:
    from attnkit.alignment.links import read_naacl
    from attnkit.data.parallel import read_lines

    src, tgt = read_lines(hansards / f"{split}.en-fr.en"), read_lines(hansards / f"{split}.en-fr.fr")
    sure, possible = read_naacl(hansards / f"{split}.en-fr.naacl", len(src))
    return {"src": src, "tgt": tgt, "sure": sure, "possible": possible}


def _aer(models: tuple[Any, Any], data: dict[str, Any], setting: dict[str, str], cache: dict) -> float:
    from attnkit.alignment.links import aer, align, symmetrize, word_matrices

    def mats(which: int, scores: str) -> list[Any]:
        key = (id(data), which, scores)
        if key not in cache:
            src, tgt = (data["src"], data["tgt"]) if which == 0 else (data["tgt"], data["src"])
            cache[key] = word_matrices(models[which], src, tgt, scores=scores)
        return cache[key]

    forward = mats(0, setting["scores"])
    if setting["combine"] == "one direction":
        links = [align(m, setting["links"]) for m in forward]
    else:
        backward = mats(1, setting["scores"])
        links = [symmetrize(f, b, setting["combine"], setting["links"]) for f, b in zip(forward, backward)]
    return aer(links, data["sure"], data["possible"]).aer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hansards", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--model", default="enfr-rnn", help="English-French translator")
    parser.add_argument("--reverse-model", default="fren-rnn", help="French-English translator")
    parser.add_argument("--scores", default="attention,grad", help="comma-separated --scores to try")
    args = parser.parse_args()
    from attnkit.api import load_translator

    models = tuple(
        load_translator(m, backend="torch", rerank=False) for m in (args.model, args.reverse_model)
    )
    trial, test, cache = _read(args.hansards, "trial"), _read(args.hansards, "test"), {}
    rows = []
    for scores, combine, links in itertools.product(args.scores.split(","), COMBINE, LINKS):
        setting = {"scores": scores, "combine": combine, "links": links}
        rows.append({**setting, "trial_aer": round(_aer(models, trial, setting, cache), 4)})
        print(json.dumps(rows[-1]), flush=True)
    best = min(rows, key=lambda r: r["trial_aer"])
    chosen = {k: best[k] for k in ("scores", "combine", "links")}
    report = {
        "models": [args.model, args.reverse_model],
        "trial": rows,
        "chosen": best,
        "test_chosen": round(_aer(models, test, chosen, cache), 4),
        "test_previous_default": round(_aer(models, test, PREVIOUS, cache), 4),
    }
    print(json.dumps({k: report[k] for k in ("chosen", "test_chosen", "test_previous_default")}))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
