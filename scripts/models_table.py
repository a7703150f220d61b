"""The README's table of shipped models, generated from each model's training_report.json.

python scripts/models_table.py          # print the table
python scripts/models_table.py --check  # exit 1 when README.md's table differs (tests run this)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRETRAINED = ROOT / "src" / "attnkit" / "pretrained"
BEGIN, END = "<!-- models-table:begin -->", "<!-- models-table:end -->"
# JoeyNMT 2.3.0 on the same English-French split, 25 minutes on 2 CPU cores (the peer file, test, beam 5)
PEER = (
    "| JoeyNMT 2.3.0 RNN, 25 min on 2 CPU cores (peer) | en→fr | — | 31.52 BLEU / 51.42 chrF | — | 45.1 | — |"
)


def _hardware(report: dict) -> str:
    seen = report.get("hardware", {}).get("this run", {})
    return "H200 GPU" if "H200" in seen.get("hardware", "") else "2 CPU cores"


def row(name: str, report: dict) -> str:
    size = (PRETRAINED / name / "model.pt").stat().st_size / 2**20
    minutes = f"{report['train_minutes']:.1f} min, {_hardware(report)}"
    dev, test = report["dev"], report["test"]
    if report["config"]["task"] == "captioning":
        latency = report.get("latency", {}).get("median_ms")
        return (
            f"| `{name}` | digit strings → captions | {dev['exact_match']:.4f} exact | "
            f"{test['exact_match']:.4f} exact / {test['token_accuracy']:.4f} words | — | "
            f"{'—' if latency is None else f'{latency:.1f}'} | {size:.1f} MiB, {minutes} |"
        )
    if report["config"]["task"] == "classification":
        held = f"{dev['accuracy']:.4f} acc / {dev['macro_f1']:.4f} F1"
        if "cv" in report:  # trained on train + dev: the held-out estimate is the recipe's cross-validation
            cv = report["cv"]
            held = f"CV {cv['accuracy'][0]:.4f} acc / {cv['macro_f1'][0]:.4f} F1"
        return (
            f"| `{name}` | reviews → 1-5 stars | {held} | "
            f"{test['accuracy']:.4f} acc / {test['macro_f1']:.4f} F1 | — | — | {size:.1f} MiB, {minutes} |"
        )
    _, source, target = report["config"]["data"]["dataset"].split("-")  # tatoeba-eng-fra
    pair = f"{source[:2]}→{target[:2]}"
    int8 = report.get("int8", {}).get("test", {}).get("bleu")
    latency = report.get("latency", {}).get(f"{name} beam5", {}).get("median_ms")
    return (
        f"| `{name}` | {pair} | {dev['bleu']:.2f} BLEU | {test['bleu']:.2f} BLEU / {test['chrf']:.2f} chrF | "
        f"{'—' if int8 is None else f'{int8:.2f}'} | {'—' if latency is None else f'{latency:.1f}'} | "
        f"{size:.1f} MiB, {minutes} |"
    )


def table() -> str:
    lines = [
        "| model | task | dev | test (beam 5) | int8 test BLEU | beam-5 ms, 1 sentence | size, training |",
        "| --- | --- | ---: | ---: | ---: | ---: | --- |",
    ]
    for path in sorted(PRETRAINED.glob("*/training_report.json")):
        if not (path.parent / "model.pt").is_file():  # enfr-llama: a Hugging Face folder, docs/long-context.md
            continue
        lines.append(row(path.parent.name, json.loads(path.read_text())))
    lines.append(PEER)
    return "\n".join(lines)


def main() -> int:
    generated = table()
    if "--check" not in sys.argv:
        print(generated)
        return 0
    text = (ROOT / "README.md").read_text()
    if BEGIN not in text or END not in text:
        print("README.md has no models table markers", file=sys.stderr)
        return 1
    current = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    if current != generated:
        print("README.md's models table differs from the training reports; regenerate it", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
