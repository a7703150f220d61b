"""The induction-head detector on a model with known induction heads (issue 43; tests/hf/induction.py):
train a 2-layer attention-only Llama on random sequences repeated once, then name the heads the
detector labels, with their scores, for the trained model and its untrained copy.

    PYTHONPATH=. python scripts/induction_check.py [--steps 1500]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1500)
    args = parser.parse_args()
    import torch

    from attnkit.hf.causal import HFCausalLM
    from attnkit.inspecting import inspect
    from tests.hf import induction

    torch.set_num_threads(2)
    tok = induction.tokenizer()
    untrained, trained = induction.model(), induction.model()
    start = time.perf_counter()
    history = induction.train(trained, steps=args.steps)
    seconds = time.perf_counter() - start
    text = " ".join(f"t{i}" for i in np.random.default_rng(1).integers(0, induction.VOCAB, 40))
    report = {
        "steps": args.steps,
        "train_seconds": round(seconds, 1),
        "repeat_losses (step, first, second)": [[s, round(a, 3), round(b, 3)] for s, a, b in history],
    }
    for name, lm in (("trained", trained), ("untrained", untrained)):
        found = inspect(HFCausalLM(lm, tok, name), text)
        report[name] = {
            f"L{h['layer']}H{h['head']}": f"{h['role']} (induction {h['induction']}, previous {h['previous']})"
            for h in found.heads()
        }
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
