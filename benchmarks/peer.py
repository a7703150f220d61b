"""Running the JoeyNMT peer (../shared/peers/run_joeynmt.sh) from a benchmark, in the same session.

The peer's own script builds its venv, checks the split, trains the joint sentencepiece model and
trains each model for BUDGET seconds; it also writes ``joey_eval.py``, used for decoding speed.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SCRIPT = ROOT.parent / "shared" / "peers" / "run_joeynmt.sh"


def run_peer(script: Path, work: Path, steps: str, budget: int, venv: Path | None = None) -> Path:
    """Run the peer script's STEPS; returns its work dir (with runs/, models/, data/split)."""
    if not script.exists():
        raise SystemExit(f"peer script {script} not found: pass --peer-script (see ../shared/peers)")
    env = {**os.environ, "PEERS": str(work), "BUDGET": str(budget), "STEPS": steps, "OMP_NUM_THREADS": "2"}
    if venv is not None:
        env["VENV"] = str(venv)
    log = work / f"peer-{steps.replace(' ', '-')}.log"
    work.mkdir(parents=True, exist_ok=True)
    with log.open("w") as handle:
        result = subprocess.run(["bash", str(script)], env=env, stdout=handle, stderr=subprocess.STDOUT)
    if result.returncode:
        raise SystemExit(f"peer script failed ({result.returncode}); see {log}")
    return work / "joey"


def peer_python(work: Path, venv: Path | None) -> str:
    return str((venv or work / "venv-joey") / "bin" / "python")


def train_stats(joey: Path, model: str) -> dict[str, float]:
    stats = json.loads((joey / "runs" / f"{model}.train.stats.json").read_text())
    tokens = stats["src_tokens"] + stats["trg_tokens"]
    return {
        "tokens_per_second": tokens / stats["step_seconds"],
        "steps": stats.get("steps", 0),
        "tokens": tokens,
    }
