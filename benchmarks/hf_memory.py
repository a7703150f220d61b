"""Peak memory of every layer's attention on a long input: a BERT-base-sized encoder (random weights,
12 layers, 12 heads, d_model 768) reads a 512-piece review, and its self-attention comes back three ways,
each in its own process (peak RSS is the process's):

- ``output_attentions``: ``model(..., output_attentions=True)``, what a Hugging Face user (and bertviz)
  gets: all 12 layers' float32 maps held at once;
- ``attnkit fp16``: ``HFClassifier.layer_attention(text)``: each layer's maps cut and stored in float16 as
  its attention module returns them;
- ``attnkit one layer``: ``layer_attention(text, layers=[-1])``: what the explorer asks for one view.

    python benchmarks/hf_memory.py
"""

from __future__ import annotations

import argparse
import gzip
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

FOLDER = Path("/tmp/attnkit-bench-bert")


def reviews(split: str) -> list[str]:
    from attnkit.datasets import document_split

    with gzip.open(document_split("reviews", split), "rt", encoding="utf-8") as lines:
        return [json.loads(line)["text"] for line in lines]


def build(folder: Path) -> None:
    import torch
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    texts = reviews("train")[:5000]
    wordpiece = BertWordPieceTokenizer(lowercase=True)
    wordpiece.train_from_iterator(texts, vocab_size=8000)
    wordpiece.save_model(str(folder))
    tokenizer = BertTokenizerFast(str(folder / "vocab.txt"))
    config = BertConfig(vocab_size=len(tokenizer), num_labels=5)  # BERT-base sizes
    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def long_text() -> str:
    return " ".join(reviews("test")[:60])  # well over 512 pieces: the model reads the first 512


def child(way: str) -> None:
    import numpy as np
    import torch

    from attnkit.api import load_classifier

    classifier = load_classifier(str(FOLDER))
    text = long_text()
    began = time.perf_counter()
    if way == "output_attentions":
        batch = classifier.tokenizer([text], truncation=True, max_length=512, return_tensors="pt")
        with torch.no_grad():
            out = classifier.model(**batch, output_attentions=True)
        maps = torch.stack([a[0] for a in out.attentions]).numpy()
    elif way == "attnkit fp16":
        _, maps = classifier.layer_attention(text)
    else:
        _, maps = classifier.layer_attention(text, layers=[-1])
    seconds = time.perf_counter() - began
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    shape = list(maps.shape)
    print(json.dumps({"seconds": seconds, "peak_mb": peak, "shape": shape, "mb": maps.nbytes / 2**20}))
    assert np.isfinite(maps.astype(np.float32)).all()


def measure(way: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", way], capture_output=True, text=True, timeout=1200
    )
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--child")
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    if not (FOLDER / "config.json").is_file():
        build(FOLDER)
    ways = ["output_attentions", "attnkit fp16", "attnkit one layer"]
    rows = {way: measure(way) for way in ways}
    print("BERT-base-sized encoder (random weights), one 512-piece input, all self-attention maps")
    print(f"{'way':20s} {'shape':>20s} {'returned MB':>12s} {'peak RSS MB':>12s} {'seconds':>8s}")
    base = rows["output_attentions"]
    for way, row in rows.items():
        if "error" in row:
            print(f"{way:20s} failed: {row['error'][:100]}")
            continue
        print(
            f"{way:20s} {str(tuple(row['shape'])):>20s} {row['mb']:12.1f} {row['peak_mb']:12.0f}"
            f" {row['seconds']:8.2f}  ({row['peak_mb'] / base['peak_mb']:.2f}x peak)"
        )


if __name__ == "__main__":
    main()
