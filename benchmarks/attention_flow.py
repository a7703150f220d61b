"""How fast attention flow (Abnar and Zuidema 2020) is, against their reference approach (networkx).

    python benchmarks/attention_flow.py [--model enfr-transformer] [--tokens 100] [--peer-sinks 5]

The input: the first dev sentences of the model's pair joined until the source has ``--tokens`` pieces;
the graph: its encoder self-attention (head mean, 0.5 A + 0.5 I per layer), as in their paper. Timed:
attnkit's ``layered_flow`` (scipy Dinic) for one output position over every input position (a row,
what the explorer shows for a hovered token) and for every output position (the whole map); the peer,
networkx's ``maximum_flow_value`` with Edmonds-Karp as in Abnar and Zuidema's code, on the same graph for
``--peer-sinks`` flows (their values are checked equal), and both per flow. Also the approximation
that drops capacities below 1e-3 and 1e-2: its time and its largest error on the row.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def encoder_levels(model_name: str, tokens: int) -> list[np.ndarray]:
    import gzip

    import torch

    from attnkit.api import load_translator
    from attnkit.datasets import parallel_split
    from attnkit.explain.attention_maps import residual_mix

    translator = load_translator(model_name, backend="torch", rerank=False)
    with gzip.open(parallel_split("tatoeba-eng-fra", "dev")[0], "rt", encoding="utf-8") as handle:
        ids: list[int] = []
        for line in handle:
            ids += translator.tokenizer.encode(line.strip())
            if len(ids) >= tokens - 1:
                break
    src = torch.tensor([ids[: tokens - 1] + [translator.eos_id]])
    model = translator.model.eval()
    with torch.no_grad():
        trace = model.trace(model.source_embedding(src), torch.ones_like(src, dtype=torch.bool), src[:, :1])
    return [residual_mix(w[0].numpy().astype(np.float64)) for w in trace.encoder]


def networkx_flows(levels: list[np.ndarray], top: int, sinks: range) -> tuple[list[float], float]:
    import networkx as nx

    graph = nx.DiGraph()
    for k, matrix in enumerate(levels):
        for i, j in zip(*np.nonzero(matrix)):
            graph.add_edge((k + 1, int(i)), (k, int(j)), capacity=float(matrix[i, j]))
    start = time.perf_counter()
    flows = [
        nx.maximum_flow_value(graph, (len(levels), top), (0, j), flow_func=nx.algorithms.flow.edmonds_karp)
        for j in sinks
    ]
    return flows, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="enfr-transformer")
    parser.add_argument("--tokens", type=int, default=100)
    parser.add_argument("--peer-sinks", type=int, default=5)
    parser.add_argument("--full", action="store_true", help="also time the whole map (tokens x tokens flows)")
    args = parser.parse_args()
    from attnkit.explain.attention_maps import layered_flow

    levels = encoder_levels(args.model, args.tokens)
    n, top = levels[0].shape[0], levels[0].shape[0] // 2
    print(f"{args.model}: {len(levels)} encoder layers, {n} source pieces, output position {top}")
    start = time.perf_counter()
    row = layered_flow(levels, [top])[0]
    row_s = time.perf_counter() - start
    print(f"attnkit flow, one row ({n} flows): {row_s:.3f} s ({1000 * row_s / n:.2f} ms per flow)")
    for floor in (1e-3, 1e-2):
        start = time.perf_counter()
        approx = layered_flow(levels, [top], floor)[0]
        seconds = time.perf_counter() - start
        print(
            f"  capacities < {floor:g} dropped: {seconds:.3f} s ({row_s / seconds:.1f}x faster), "
            f"largest error {np.abs(approx - row).max():.4f} (row values {row.min():.3f}-{row.max():.3f})"
        )
    if args.full:  # rows in parallel threads (the default) against one thread (the previous behaviour)
        for floor in (0.0, 1e-3):
            times, maps = {}, {}
            for threads in ("1", str(os.cpu_count() or 1)):
                os.environ["OMP_NUM_THREADS"] = threads
                start = time.perf_counter()
                maps[threads] = layered_flow(levels, None, floor)
                times[threads] = time.perf_counter() - start
            one, many = times["1"], times[threads]
            same = np.array_equal(maps["1"], maps[threads])
            print(
                f"attnkit flow, whole map ({n * n} flows, floor {floor:g}): {many:.1f} s on {threads} "
                f"threads, {one:.1f} s on 1 ({one / many:.2f}x); same values: {same}"
            )
    sinks = range(args.peer_sinks)
    peer, peer_s = networkx_flows(levels, top, sinks)
    ours_s = row_s * len(sinks) / n
    same = np.allclose(peer, row[: len(sinks)], atol=1e-5)
    print(
        f"networkx Edmonds-Karp (Abnar and Zuidema's code path), {len(sinks)} flows: {peer_s:.2f} s "
        f"({1000 * peer_s / len(sinks):.0f} ms per flow); attnkit per flow {1000 * row_s / n:.2f} ms: "
        f"{peer_s / ours_s:.0f}x faster; values equal (1e-5): {same}"
    )


if __name__ == "__main__":
    main()
