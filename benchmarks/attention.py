"""Attention speed: attnkit vs torch.nn.MultiheadAttention (forward + backward), and the NumPy
reference vs tutorial-style NumPy code, in one process. Prints times and ratios.

    python benchmarks/attention.py [--threads 2] [--repeats 20]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import torch

from attnkit import reference
from attnkit.attention import MultiHeadAttention, key_padding_to_attn_mask


def best_time(fn: Callable[[], object], repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def torch_rows(batch: int, lengths: list[int], dim: int, heads: int, repeats: int) -> list[tuple]:
    rows = []
    for length in lengths:
        ours = MultiHeadAttention(dim, heads)
        peer = torch.nn.MultiheadAttention(dim, heads, batch_first=True)
        x = torch.randn(batch, length, dim, requires_grad=True)
        pad = torch.zeros(batch, length, dtype=torch.bool)
        pad[: batch // 2, length * 3 // 4 :] = True  # half the batch padded
        mask = key_padding_to_attn_mask(pad)

        def run_ours(need: bool) -> None:
            out, _ = ours(x, x, x, mask=mask, need_weights=need)
            out.sum().backward()

        def run_peer(need: bool) -> None:
            out, _ = peer(x, x, x, key_padding_mask=pad, need_weights=need, average_attn_weights=False)
            out.sum().backward()

        for need in (False, True):
            t_ours = best_time(lambda: run_ours(need), repeats)
            t_peer = best_time(lambda: run_peer(need), repeats)
            rows.append((f"B={batch} T=S={length} D={dim} H={heads}", need, t_ours, t_peer))
    return rows


def tutorial_scaled_dot(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The tutorial's NumPy sketch (no max subtraction), for timing only."""
    scores = np.matmul(q, k.transpose(0, 2, 1)) / np.sqrt(q.shape[-1])
    weights = np.exp(scores) / np.sum(np.exp(scores), axis=-1, keepdims=True)
    return np.matmul(weights, v)


def numpy_rows(batch: int, lengths: list[int], dim: int, repeats: int) -> list[tuple]:
    rows = []
    rng = np.random.default_rng(0)
    for length in lengths:
        q, k, v = (rng.standard_normal((batch, length, dim)) * 0.1 for _ in range(3))
        t_ref = best_time(lambda: reference.attend(reference.scaled_dot_scores(q, k), v), repeats)
        t_tut = best_time(lambda: tutorial_scaled_dot(q, k, v), repeats)
        rows.append((f"B={batch} T=S={length} D={dim}", t_ref, t_tut))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--lengths", default="16,64,256")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    lengths = [int(x) for x in args.lengths.split(",")]
    print(f"torch {torch.__version__}, {args.threads} threads, median of {args.repeats}; forward+backward")
    print(f"{'shape':32s} {'weights':>8s} {'attnkit ms':>11s} {'torch MHA ms':>13s} {'ratio':>6s}")
    for shape, need, ours, peer in torch_rows(32, lengths, 256, 4, args.repeats):
        print(f"{shape:32s} {str(need):>8s} {1e3 * ours:11.2f} {1e3 * peer:13.2f} {ours / peer:6.2f}")
    print(f"\n{'NumPy forward':32s} {'reference ms':>12s} {'tutorial ms':>12s} {'ratio':>6s}")
    for shape, ref, tut in numpy_rows(32, lengths, 256, max(3, args.repeats // 4)):
        print(f"{shape:32s} {1e3 * ref:12.2f} {1e3 * tut:12.2f} {ref / tut:6.2f}")


if __name__ == "__main__":
    main()
