"""Choose noisy-channel reranking weights on dev, then score test once (``attnkit.rerank``).

    python scripts/rerank_weights.py --model enfr-rnn --channel fren-rnn \
        --out docs/experiments/logs/rerank-enfr-rnn.json

The n-best lists (beam 5, 5 candidates) of the forward model and the channel model's log p(x | y) of every
candidate are computed once per split; the grid of channel weight x length weight is scored by corpus BLEU
on dev; the best dev setting (and weights 0, 0: no reranking) is then scored on test. Prints one line per
setting tried and the choice.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import time
from pathlib import Path
from typing import Any

CHANNEL = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0]
LENGTH = [-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 1.5]


def _read(split: str, pair: str) -> tuple[list[str], list[str]]:
    from attnkit.datasets import parallel_split

    paths = parallel_split(pair, split)
    src, ref = (gzip.decompress(p.read_bytes()).decode("utf-8").rstrip("\n").split("\n") for p in paths)
    return src, ref


def _lists(forward: Any, channel: Any, sources: list[str], beam: int) -> list[dict[str, Any]]:
    from attnkit.rerank import NoisyChannel

    results = forward.translate(sources, beam=beam, n_best=beam)
    scorer = NoisyChannel(channel, 0.0, 0.0)
    reranked = scorer.rerank(results)
    return [
        r.rerank["candidates"] if r.rerank else [{"text": "", "forward": 0, "channel": 0, "length": 0}]
        for r in reranked
    ]


def _pick(lists: list[list[dict[str, Any]]], channel_weight: float | None, length_weight: float) -> list[str]:
    """The chosen candidate of each list; ``channel_weight`` None: the beam's own first (no reranking)."""
    out = []
    for cands in lists:
        if channel_weight is None:
            out.append(next(c["text"] for c in cands if c.get("beam_rank", 0) == 0))
            continue
        best = max(
            cands, key=lambda c: c["forward"] + channel_weight * c["channel"] + length_weight * c["length"]
        )
        out.append(best["text"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--channel", required=True)
    parser.add_argument("--pair", default="tatoeba-eng-fra")
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    from attnkit.api import load_translator, runtime_int8
    from attnkit.evaluation.metrics import corpus_scores

    int8 = runtime_int8(args.model)  # the runtime's variant: what the default would run
    forward, channel = (
        load_translator(args.model, int8=int8, rerank=False),
        load_translator(args.channel, rerank=False),
    )
    report: dict[str, Any] = {"model": args.model, "int8": int8, "channel": args.channel, "beam": args.beam}
    report["dev"] = []
    dev_src, dev_ref = _read("dev", args.pair)
    start = time.perf_counter()
    dev_lists = _lists(forward, channel, dev_src, args.beam)
    report["dev_seconds"] = round(time.perf_counter() - start, 1)
    for cw, lw in itertools.product(CHANNEL, LENGTH):
        bleu = corpus_scores(_pick(dev_lists, cw, lw), dev_ref).bleu
        report["dev"].append({"channel_weight": cw, "length_weight": lw, "bleu": round(bleu, 2)})
        print(json.dumps(report["dev"][-1]), flush=True)
    best = max(report["dev"], key=lambda r: r["bleu"])
    base = {"bleu": round(corpus_scores(_pick(dev_lists, None, 0.0), dev_ref).bleu, 2)}
    report["dev_without"] = base["bleu"]
    report["chosen"] = best
    test_src, test_ref = _read("test", args.pair)
    test_lists = _lists(forward, channel, test_src, args.beam)
    report["test"] = {
        "without": round(corpus_scores(_pick(test_lists, None, 0.0), test_ref).bleu, 2),
        "chosen": round(
            corpus_scores(_pick(test_lists, best["channel_weight"], best["length_weight"]), test_ref).bleu, 2
        ),
    }
    print(f"dev {base['bleu']} -> {best['bleu']} at {best}; test {report['test']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
