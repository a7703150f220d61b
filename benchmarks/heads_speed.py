"""What batching the masked decodes of ``attnkit heads`` buys: one mask at a time vs many together.

    python benchmarks/heads_speed.py [--model enfr-transformer] [--n 200] [--beam 1]

Scores the unmasked model and each head masked alone (the ablation part of ``attnkit heads``) on the
first N en-fr dev pairs, two ways in one run:
- one at a time (the behaviour before batching): for each mask, gate the model and translate the
  corpus, then its teacher-forced loss;
- together (``evaluation.heads.score_masks``): every sentence batch decoded under many masks at once,
  the encoder layers below a mask's first masked head computed once for all masks.
Prints seconds, the ratio and whether every BLEU and loss is the same (absolute times drift).
"""

from __future__ import annotations

import argparse
import gzip
import time
import warnings


def one_at_a_time(translator, data, beam, masks):
    from attnkit.evaluation.heads import corpus_loss, masked_heads
    from attnkit.evaluation.metrics import corpus_scores

    out = []
    for mask in masks:
        with masked_heads(translator.model, mask), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # masked models run to the length limit: one warning each
            hypotheses = [r.translation for r in translator.translate(data["sources"], beam=beam)]
            loss = corpus_loss(translator, data["src_ids"], data["tgt_ids"])
        bleu = corpus_scores(hypotheses, data["references"]).bleu
        out.append({"bleu": round(bleu, 2), "loss": round(loss, 4)})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="enfr-transformer")
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--beam", type=int, default=1)
    args = parser.parse_args()
    from attnkit.api import load_translator
    from attnkit.datasets import parallel_split
    from attnkit.evaluation.heads import all_heads, score_masks

    paths = parallel_split("tatoeba-eng-fra", "dev")
    sides = []
    for path in paths:
        with gzip.open(path, "rt", encoding="utf-8") as handle:
            sides.append([line.strip() for _, line in zip(range(args.n), handle)])
    translator = load_translator(args.model, backend="torch", rerank=False)
    src_ids, tgt_ids = translator.pair_ids(*sides)
    data = {"sources": sides[0], "references": sides[1], "src_ids": src_ids, "tgt_ids": tgt_ids}
    masks = [[]] + [[head] for head in all_heads(translator.model)]
    start = time.perf_counter()
    before = one_at_a_time(translator, data, args.beam, masks)
    middle = time.perf_counter()
    after = score_masks(translator, data, args.beam, masks)
    end = time.perf_counter()
    print(
        f"{args.model}, {len(masks)} masks x {args.n} dev pairs, beam {args.beam}: one at a time "
        f"{middle - start:.1f} s, together {end - middle:.1f} s ({(middle - start) / (end - middle):.2f}x); "
        f"same BLEU and loss for every mask: {before == after}"
    )


if __name__ == "__main__":
    main()
