"""What noisy-channel reranking costs: single-sentence beam-5 latency with and without it, same run.

    python benchmarks/rerank_speed.py [--models enfr-rnn,enfr-transformer] [--channel fren-rnn] [--n 200]

Each model on its ONNX runtime (the default backend; int8 where that is all the export has), one dev
sentence per call, beam 5; with reranking the beam keeps its 5-best list and the channel model scores
each candidate under teacher forcing. Prints medians and the ratio (absolute times drift; compare ratios).
"""

from __future__ import annotations

import argparse
import gzip
import statistics
import time


def latency(translator, sentences: list[str]) -> float:
    translator.translate(sentences[:3], beam=5)
    times = []
    for sentence in sentences:
        start = time.perf_counter()
        translator.translate([sentence], beam=5)
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="enfr-rnn,enfr-transformer")
    parser.add_argument("--channel", default="fren-rnn")
    parser.add_argument("--n", type=int, default=200)
    args = parser.parse_args()
    from attnkit.api import load_translator, runtime_int8
    from attnkit.datasets import parallel_split

    with gzip.open(parallel_split("tatoeba-eng-fra", "dev")[0], "rt", encoding="utf-8") as handle:
        sentences = [line.strip() for _, line in zip(range(args.n), handle)]
    for name in args.models.split(","):
        int8 = runtime_int8(name)  # the runtime's variant (the shipped Transformers export int8 only)
        alone = latency(load_translator(name, int8=int8, rerank=False), sentences)
        reranked = latency(load_translator(name, int8=int8, rerank=args.channel), sentences)
        print(
            f"{name}{' (int8)' if int8 else ''}: beam 5 {alone:.1f} ms, "
            f"with {args.channel} reranking {reranked:.1f} ms "
            f"({reranked / alone:.2f}x), median over {len(sentences)} dev sentences"
        )


if __name__ == "__main__":
    main()
