"""``attnkit list``: registered scorers, models and shipped checkpoints."""

from __future__ import annotations

import argparse
from typing import Any

from ..files import json_text


def add_parser(sub: Any, name: str) -> None:
    p = sub.add_parser(name, help="list scorers, models and shipped checkpoints")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(run=run)


def _variants(folder: Any) -> list[str]:
    """The graph variants of an export, fp32 first (the manifest only: no checksums, no torch)."""
    from ..runtime.manifest import read_manifest

    return sorted(read_manifest(folder, verify=False).graphs, key=lambda v: (v != "fp32", v))


def run(args: argparse.Namespace) -> int:
    from .. import store
    from ..names import MODELS, SCORERS
    from ..pretrained import DEFAULTS, RECORDS, find_export, shipped

    info = {
        "scorers": list(SCORERS),
        "models": list(MODELS),
        "shipped": {name: str(path) for name, path in shipped().items()},
        "defaults": DEFAULTS,
        "exports": [name for name in shipped() if find_export(name) is not None],
        # shipped Hugging Face folders (no checkpoint): the causal LM that attnkit inspect reads
        "language_models": [
            n
            for n, r in RECORDS.items()
            if r.task == "generation" and store.local("pretrained", n) is not None
        ],
    }
    info["fetchable"] = [
        name for kind in store.KINDS for name in store.names(kind) if store.local(kind, name) is None
    ]
    info["cache"] = str(store.cache_root())
    variants = {name: _variants(find_export(name)) for name in info["exports"]}
    info["export_variants"] = variants
    if args.json:
        print(json_text(info, indent=2))
        return 0
    print("scorers:  " + ", ".join(info["scorers"]))
    print("models:   " + ", ".join(info["models"]))
    print("shipped:  " + (", ".join(info["shipped"]) or "none") + " (installed)")
    if info["language_models"]:
        print("language models (attnkit inspect): " + ", ".join(info["language_models"]))
    if info["fetchable"]:
        print("fetchable: " + ", ".join(info["fetchable"]))
        print(f"  (attnkit fetch NAME --from SOURCE: into {info['cache']})")
    exports = [f"{n} ({', '.join(v)})" for n, v in variants.items()]
    print("with an ONNX export (run without torch): " + (", ".join(exports) or "none"))
    if any(v == ["int8"] for v in variants.values()):
        print("  (an int8-only export runs its int8 graphs by default; --backend torch runs the checkpoint)")
    for task, name in DEFAULTS.items():
        print(f"default for {task}: {name}")
    return 0
