"""Load on `attnkit serve` (127.0.0.1 only): 1, 4, 16 and 64 concurrent clients, micro-batching on and off.

Each client sends one sentence per request (POST /api/translate, beam 5, sentences drawn from the dev
split) for --seconds per level; the script prints requests/s, p50/p95/p99 latency, errors and the
server's RSS after warm-up and at the end, for each mode, and the batching-on/off throughput ratio.
The clients run in this process on the same 2 cores as the server, as a local user's browser would.

    python benchmarks/serve_load.py [--seconds 10] [--levels 1,4,16,64] [--int8] [--out FILE]

``--adversarial``: instead, 16 clients of one-sentence requests (beam 5) while 2 clients loop the heaviest
request the server's limits allow (as many 100-word sentences as ``max_work`` admits at the largest beam,
``n_best`` = beam); prints the light clients' latency and errors, the heavy requests served, and the
server's RSS after warm-up and again after the run.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from attnkit.datasets import parallel_split


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _status_mb(pid: int, field: str) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith(field))) / 1024


def rss_mb(pid: int) -> float:
    return _status_mb(pid, "VmRSS")


def peak_mb(pid: int) -> float:
    return _status_mb(pid, "VmHWM")


def start_server(batching: bool, int8: bool = False) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    args = [sys.executable, "-m", "attnkit", "serve", "--port", str(port)] + (
        [] if batching else ["--no-batching"]
    )
    args += ["--int8"] if int8 else []
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    process.stdout.readline()  # the URL line: models are loaded
    url = f"http://127.0.0.1:{port}"
    for _ in range(200):
        try:
            httpx.get(f"{url}/api/health", timeout=1)
            return process, url
        except httpx.TransportError:
            time.sleep(0.05)
    raise SystemExit("server did not start")


Body = dict[str, Any]


async def clients_loop(
    http: httpx.AsyncClient, url: str, bodies: list[Body], clients: int, stop: float
) -> tuple[list[float], int]:
    """``clients`` loops posting ``bodies`` in turn until ``stop``: latencies (s) and errors."""
    latencies: list[float] = []
    errors = 0

    async def client(k: int) -> None:
        nonlocal errors
        i = k
        while time.perf_counter() < stop:
            body = bodies[i % len(bodies)]
            i += clients
            start = time.perf_counter()
            try:
                answer = await http.post(f"{url}/api/translate", json=body)
                ok = answer.status_code == 200 and "results" in answer.json()
            except httpx.HTTPError:
                ok = False
            latencies.append(time.perf_counter() - start)
            errors += not ok

    await asyncio.gather(*(client(k) for k in range(clients)))
    return latencies, errors


def light_bodies(sentences: list[str]) -> list[Body]:
    return [{"sentences": [s], "beam": 5} for s in sentences]


async def level(url: str, clients: int, seconds: float, sentences: list[str]) -> dict[str, Any]:
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(limits=limits, timeout=60) as http:
        began = time.perf_counter()
        latencies, errors = await clients_loop(http, url, light_bodies(sentences), clients, began + seconds)
        elapsed = time.perf_counter() - began
    return summary(clients, latencies, errors, elapsed)


def summary(clients: int, latencies: list[float], errors: int, elapsed: float) -> dict[str, Any]:
    ms = sorted(1000 * x for x in latencies)
    pick = lambda q: ms[min(len(ms) - 1, int(q * len(ms)))]  # noqa: E731
    return {
        "clients": clients,
        "requests": len(ms),
        "requests_per_s": len(ms) / elapsed,
        "p50_ms": statistics.median(ms),
        "p95_ms": pick(0.95),
        "p99_ms": pick(0.99),
        "errors": errors,
    }


def run_mode(
    batching: bool, levels: list[int], seconds: float, sentences: list[str], int8: bool = False
) -> dict[str, Any]:
    process, url = start_server(batching, int8)
    try:
        asyncio.run(level(url, max(levels), 3.0, sentences))  # warm-up: largest batches, allocator pools
        rss_start = rss_mb(process.pid)
        rows = [asyncio.run(level(url, c, seconds, sentences)) for c in levels]
        rss_end = rss_mb(process.pid)
        calls = httpx.get(f"{url}/api/health").json()["model_calls"]["translate"]
    finally:
        process.terminate()
        process.wait(timeout=20)
    return {"rows": rows, "rss_start_mb": rss_start, "rss_end_mb": rss_end, "model_calls": calls}


def heavy_bodies(sentences: list[str], limits: dict[str, int]) -> list[Body]:
    """The heaviest requests the limits admit: sentences of ``max_words`` real words (within
    ``max_chars``), as many as ``max_work`` allows at ``max_beam``, every hypothesis returned."""
    words = " ".join(sentences).split()
    beam, per = limits["max_beam"], limits["max_words"]
    count = max(1, min(limits["max_items"], limits["max_work"] // (per * beam)))
    texts, start = [], 0
    while len(texts) < 2 * count:
        text = " ".join(words[start : start + per])
        start += per
        if len(text) <= limits["max_chars"]:
            texts.append(text)
    requests = [texts[:count], texts[count:]]
    return [{"sentences": t, "beam": beam, "n_best": beam} for t in requests]


async def mixed(url: str, light: int, heavy: int, seconds: float, sentences: list[str]) -> dict[str, Any]:
    limits = httpx.get(f"{url}/api/models").json()["limits"]
    pool = httpx.Limits(max_connections=light + heavy, max_keepalive_connections=light + heavy)
    async with httpx.AsyncClient(limits=pool, timeout=120) as http:
        began = time.perf_counter()
        stop = began + seconds
        (lat_l, err_l), (lat_h, err_h) = await asyncio.gather(
            clients_loop(http, url, light_bodies(sentences), light, stop),
            clients_loop(http, url, heavy_bodies(sentences, limits), heavy, stop),
        )
        elapsed = time.perf_counter() - began
    return {"light": summary(light, lat_l, err_l, elapsed), "heavy": summary(heavy, lat_h, err_h, elapsed)}


def run_adversarial(seconds: float, sentences: list[str], int8: bool) -> dict[str, Any]:
    process, url = start_server(True, int8)
    try:
        asyncio.run(level(url, 16, 3.0, sentences))  # warm-up
        rss_warm = rss_mb(process.pid)
        alone = asyncio.run(level(url, 16, seconds, sentences))
        result = asyncio.run(mixed(url, 16, 2, seconds, sentences))
        time.sleep(2.0)
        rss_after = rss_mb(process.pid)
        rss_peak = peak_mb(process.pid)
    finally:
        process.terminate()
        process.wait(timeout=20)
    return {"alone": alone, **result, "rss_warm_mb": rss_warm, "rss_after_mb": rss_after, "peak_mb": rss_peak}


def print_adversarial(report: dict[str, Any], seconds: float) -> None:
    print(f"attnkit serve (default models), adversarial mix for {seconds:.0f} s, batching on")
    print(f"{'clients':24s} {'requests':>8s} {'p50 ms':>7s} {'p95 ms':>7s} {'p99 ms':>7s} {'errors':>6s}")
    names = {"alone": "16 light, alone", "light": "16 light, with 2 heavy", "heavy": "2 heavy (max request)"}
    for key, name in names.items():
        row = report[key]
        print(
            f"{name:24s} {row['requests']:8d} {row['p50_ms']:7.1f} {row['p95_ms']:7.1f}"
            f" {row['p99_ms']:7.1f} {row['errors']:6d}"
        )
    ratio = report["light"]["p99_ms"] / report["alone"]["p99_ms"]
    growth = 100 * (report["rss_after_mb"] / report["rss_warm_mb"] - 1)
    print(f"light p99 with heavy / alone = {ratio:.2f}x (target: p99 under 250 ms, 0 errors)")
    print(
        f"server RSS {report['rss_warm_mb']:.1f} MB warm, {report['rss_after_mb']:.1f} MB after the run"
        f" ({growth:+.1f}%, target within 10%); peak {report['peak_mb']:.1f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--levels", default="1,4,16,64")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--int8", action="store_true", help="serve the int8 graphs (both modes)")
    parser.add_argument(
        "--adversarial", action="store_true", help="16 light clients + 2 heaviest (see above)"
    )
    args = parser.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    dev = parallel_split("tatoeba-eng-fra", "dev")[0]
    sentences = gzip.decompress(dev.read_bytes()).decode("utf-8").splitlines()[:500]
    if args.adversarial:
        report = run_adversarial(args.seconds, sentences, args.int8)
        print_adversarial(report, args.seconds)
        if args.out:
            args.out.write_text(json.dumps(report, indent=2))
        return
    modes = {"batching on": run_mode(True, levels, args.seconds, sentences, args.int8)}
    modes["batching off"] = run_mode(False, levels, args.seconds, sentences, args.int8)
    variant = "ONNX int8" if args.int8 else "ONNX"
    per_level = f"{args.seconds:.0f} s per level"
    print(f"attnkit serve, enfr-rnn ({variant}), beam 5, one sentence per request, {per_level}")
    print(
        f"{'mode':13s} {'clients':>7s} {'req/s':>7s} {'p50 ms':>7s} {'p95 ms':>7s}"
        f" {'p99 ms':>7s} {'errors':>6s}"
    )
    for name, mode in modes.items():
        for row in mode["rows"]:
            print(
                f"{name:13s} {row['clients']:7d} {row['requests_per_s']:7.1f} {row['p50_ms']:7.1f}"
                f" {row['p95_ms']:7.1f} {row['p99_ms']:7.1f} {row['errors']:6d}"
            )
        growth = 100 * (mode["rss_end_mb"] / mode["rss_start_mb"] - 1)
        calls = mode["model_calls"]
        print(
            f"{name:13s} server RSS {mode['rss_start_mb']:.1f} MB after warm-up,"
            f" {mode['rss_end_mb']:.1f} MB at the end ({growth:+.1f}%);"
            f" {calls['items']} sentences in {calls['calls']} model calls"
        )
    on, off = modes["batching on"]["rows"], modes["batching off"]["rows"]
    for a, b in zip(on, off):
        print(
            f"{a['clients']:3d} clients: batching on / off ="
            f" {a['requests_per_s'] / b['requests_per_s']:.2f}x req/s"
        )
    if args.out:
        args.out.write_text(json.dumps(modes, indent=2))


if __name__ == "__main__":
    main()
