"""Markdown results table from `attnkit evaluate --json` reports (runs/reports/NAME.{dev,test}.json).

python scripts/results_table.py rnn-bahdanau-25min rnn-bahdanau transformer rnn-luong-25min rnn-luong
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPORTS = Path("runs/reports")


def row(name: str) -> str:
    dev = json.loads((REPORTS / f"{name}.dev.json").read_text())
    test = json.loads((REPORTS / f"{name}.test.json").read_text())
    return (
        f"| {name} | {dev['bleu']:.2f} | {test['bleu']:.2f} | {test['chrf']:.2f} | "
        f"{test['attention_entropy']:.3f} | {test['sentences_per_second']:.1f} | "
        f"{test['ms_per_sentence']:.1f} | "
        f"{test['peak_memory_mb']:.0f} |"
    )


def main() -> None:
    print("| model | dev BLEU | test BLEU | test chrF | entropy (nats) | sent/s | ms/sent | peak MB |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in sys.argv[1:]:
        print(row(name))
    first = json.loads((REPORTS / f"{sys.argv[1]}.test.json").read_text())
    print(f"\nBLEU `{first['signature']['bleu']}`, chrF `{first['signature']['chrf']}`; beam 5, batch 64.")


if __name__ == "__main__":
    main()
