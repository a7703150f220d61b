"""The shipped Transformer exported as a Hugging Face folder, on the whole test split: tokenizer ids,
translations and attention against the torch backend, and what plain transformers makes of the folder.

    python scripts/check_hf_export.py [--model enfr-transformer] [--dataset tatoeba-eng-fra] [--limit N]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="enfr-transformer")
    parser.add_argument("--dataset", default="tatoeba-eng-fra")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--beam", type=int, default=5)
    args = parser.parse_args()
    import torch
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    from attnkit.datasets import parallel_split
    from attnkit.export.hf import export_hf
    from attnkit.hf.seq2seq import HFTranslator
    from attnkit.pretrained import resolve
    from attnkit.translator import Translator

    src, _ = parallel_split(args.dataset, "test")
    sources = gzip.decompress(src.read_bytes()).decode("utf-8").splitlines()
    sources = sources[: args.limit] if args.limit else sources
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "hf"
        export_hf(args.model, folder)
        ours, theirs = (
            Translator.from_checkpoint(resolve(args.model, "translation")),
            HFTranslator.from_pretrained(folder),
        )
        same_ids = sum(ours.tokenizer.encode(s) == theirs.tokenizer.encode(s) for s in sources)
        began = time.perf_counter()
        a = ours.translate(sources, beam=args.beam)
        torch_s = time.perf_counter() - began
        began = time.perf_counter()
        b = theirs.translate(sources, beam=args.beam)
        hf_s = time.perf_counter() - began
        same = sum(x.target_ids == y.target_ids for x, y in zip(a, b))
        diffs = [
            float(np.abs(x.attention - y.attention).max())
            for x, y in zip(a, b)
            if x.attention.shape == y.attention.shape
        ]
        tok = AutoTokenizer.from_pretrained(folder)
        model = AutoModelForSeq2SeqLM.from_pretrained(folder)
        with torch.no_grad():
            out = model.generate(
                **tok(sources[:20], return_tensors="pt", padding=True), num_beams=args.beam, max_new_tokens=60
            )
        plain = tok.batch_decode(out, skip_special_tokens=True)
        plain_same = sum(p.strip() == x.translation.strip() for p, x in zip(plain, a[:20]))
    report = {
        "model": args.model,
        "sentences": len(sources),
        "tokenizer_same_ids": f"{same_ids}/{len(sources)}",
        f"beam {args.beam} same tokens": f"{same}/{len(sources)}",
        "max_attention_diff": max(diffs, default=0.0),
        "seconds_torch": round(torch_s, 1),
        "seconds_hf_backend": round(hf_s, 1),
        "plain_generate_same_text_first_20": f"{plain_same}/20",
        "plain_generate_example": plain[0],
    }
    print(json.dumps(report, indent=2))
    return 0 if same == len(sources) and same_ids == len(sources) else 1


if __name__ == "__main__":
    sys.exit(main())
