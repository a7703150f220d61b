"""Every shipped model's outputs as JSON lines, for a before/after comparison of a change:

    PYTHONPATH=<old checkout>/src python scripts/compare_outputs.py before.jsonl
    python scripts/compare_outputs.py after.jsonl && cmp before.jsonl after.jsonl

60 dev sentences through each shipped translator (reranking on and off where it has a channel model, and
the default), 60 dev reviews through reviews-han (the exports' graphs: scripts/compare_exports.py)."""

from __future__ import annotations

import gzip
import json
import sys

from attnkit.api import load_classifier, load_translator
from attnkit.datasets import document_split, parallel_split


def lines(path, n: int = 60) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return handle.read().splitlines()[:n]


def main(out_path: str) -> None:
    en_fr, en_de = parallel_split("tatoeba-eng-fra", "dev"), parallel_split("tatoeba-eng-deu", "dev")
    runs = [
        ("enfr-transformer", True, lines(en_fr[0])),
        ("enfr-transformer", False, lines(en_fr[0])),
        ("enfr-rnn", True, lines(en_fr[0])),
        ("enfr-rnn", False, lines(en_fr[0])),
        ("fren-rnn", False, lines(en_fr[1])),
        ("ende-transformer", True, lines(en_de[0])),
        ("ende-transformer", False, lines(en_de[0])),
        (None, None, lines(en_fr[0])),
    ]
    with open(out_path, "w", encoding="utf-8") as out:
        for name, rerank, sentences in runs:
            for r in load_translator(name, rerank=rerank).translate(sentences, beam=5):
                out.write(json.dumps({"model": name, "rerank": rerank, **r.to_json()}, ensure_ascii=False) + "\n")
        texts = [json.loads(line)["text"] for line in lines(document_split("reviews", "dev"))]
        for r in load_classifier("reviews-han").classify(texts):
            out.write(json.dumps(r.to_json()) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
