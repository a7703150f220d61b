"""``attnkit list``: registered scorers, models and shipped checkpoints."""

from __future__ import annotations

import argparse
import json
from typing import Any


def add_parser(sub: Any, name: str) -> None:
    p = sub.add_parser(name, help="list scorers, models and shipped checkpoints")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..names import MODELS, SCORERS
    from ..pretrained import DEFAULTS, find_export, shipped

    info = {
        "scorers": list(SCORERS),
        "models": list(MODELS),
        "shipped": {name: str(path) for name, path in shipped().items()},
        "defaults": DEFAULTS,
        "exports": [name for name in shipped() if find_export(name) is not None],
    }
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print("scorers:  " + ", ".join(info["scorers"]))
    print("models:   " + ", ".join(info["models"]))
    print("shipped:  " + (", ".join(info["shipped"]) or "none"))
    print("with an ONNX export (run without torch): " + (", ".join(info["exports"]) or "none"))
    for kind, name in DEFAULTS.items():
        print(f"default {kind}: {name}")
    return 0
