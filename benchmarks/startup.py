"""Whole-process start-to-answer of `attnkit translate "The cat sits on the mat."` (the default: int8
Transformer on onnxruntime, reranked by fren-rnn), wall time and the child's own peak RSS, median of
--repeats, interleaved so that drift hits every variant alike, in one run:

- ``cache on``: the runtime cache warm (``attnkit.runtime.cache``: checksums remembered, onnxruntime's
  optimized graphs read back), as every run after the first on a machine;
- ``cache off``: ``ATTNKIT_RUNTIME_CACHE=0``, every start hashing each file and optimizing each graph (the
  behaviour before the cache);
- ``--no-rerank`` and ``--model enfr-rnn --no-rerank``, each with the cache on, for scale;
- with ``--before SRC`` (another checkout's ``src`` folder, e.g. a ``git worktree`` of an older commit), the
  default as that code runs it, for a before/after ratio in the same run.

Children compile their bytecode once into a temporary ``PYTHONPYCACHEPREFIX`` (as ``pip install`` does),
even where the environment sets ``PYTHONDONTWRITEBYTECODE`` (recompiling attnkit's sources costs ~40 ms
a start and is not what an installed attnkit does).

    python benchmarks/startup.py [--repeats 9] [--before /tmp/old/src]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

SENTENCE = "The cat sits on the mat."
CHILD = """import sys
from attnkit.cli.main import main
code = main(sys.argv[1:])
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM"))
print("PEAK_KB", hwm, file=sys.stderr)
sys.exit(code)
"""
VARIANTS = {
    "default, cache on": ([], "1"),
    "default, cache off": ([], "0"),
    "--no-rerank, cache on": (["--no-rerank"], "1"),
    "enfr-rnn --no-rerank, cache on": (["--model", "enfr-rnn", "--no-rerank"], "1"),
}


def once(extra: list[str], cache: str, home: str, source: str | None = None) -> tuple[float, float, str]:
    env = {**os.environ, "ATTNKIT_RUNTIME_CACHE": cache, "ATTNKIT_HOME": home, "OMP_NUM_THREADS": "2"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = os.path.join(home, "bytecode" if source is None else "bytecode-before")
    if source is not None:
        env["PYTHONPATH"] = source
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, "translate", SENTENCE, *extra], env=env, capture_output=True, text=True
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return seconds, int(done.stderr.rsplit("PEAK_KB", 1)[1].split()[0]) / 1024, done.stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--before", metavar="SRC", help="another checkout's src folder to time as well")
    args = parser.parse_args()
    variants = {name: (extra, cache, None) for name, (extra, cache) in VARIANTS.items()}
    if args.before:
        variants[f"default, cache on, {args.before}"] = ([], "1", args.before)
    with tempfile.TemporaryDirectory() as home:
        for extra, cache, source in variants.values():
            once(extra, cache, home, source)  # warm the page cache, the runtime cache and the bytecode
        found: dict[str, list[tuple[float, float, str]]] = {name: [] for name in variants}
        for _ in range(args.repeats):
            for name, (extra, cache, source) in variants.items():
                found[name].append(once(extra, cache, home, source))
    base = statistics.median(t for t, _, _ in found["default, cache off"])
    print(f"{'variant':<44} {'median s':>9} {'peak MiB':>9} {'vs cache off':>13}  output")
    for name, runs in found.items():
        seconds = statistics.median(t for t, _, _ in runs)
        peak = statistics.median(m for _, m, _ in runs)
        print(f"{name:<44} {seconds:>9.3f} {peak:>9.1f} {seconds / base:>12.2f}x  {runs[0][2]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
