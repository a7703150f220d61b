"""Word alignment AER of attnkit's models beside a dedicated aligner, eflomal, in one run.

eflomal (Östling and Tiedemann 2017; `pip install eflomal`, the `peers` extra) is trained on the same
Tatoeba English-French training text as attnkit's models plus the Hansards sentences to align (the usual
way to run an unsupervised aligner), lowercased and split at punctuation as the Hansards text is; its two
directions are symmetrized with attnkit's grow-diag-final. attnkit's rows are the `attnkit align`
settings named beside them (the first: `attnkit align` as it ships). Scored on the WPT-03 gold links
given with --hansards (trial and test).

    python benchmarks/alignment_peers.py --hansards DIR [--reverse-model runs/fren-rnn/avg.pt] [--json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from attnkit.alignment.aligner import aer_interval
from attnkit.alignment.links import (
    Links,
    aer,
    align,
    grow_diag,
    read_naacl,
    symmetrize,
    word_matrices,
)
from attnkit.api import load_translator
from attnkit.datasets import parallel_split

WORD = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]", re.UNICODE)


def normalize(line: str) -> str:
    """Lowercase and split off punctuation, as the Hansards gold text is."""
    return " ".join(WORD.findall(line.lower()))


def read_pharaoh(path: str, n: int) -> list[Links]:
    lines = Path(path).read_text().splitlines()
    out = [{tuple(int(i) for i in x.split("-")) for x in line.split()} for line in lines]
    return [set(x) for x in out[:n]]  # type: ignore[misc]


def eflomal_links(hansards: dict[str, tuple[list[str], list[str]]], limit: int | None) -> dict[str, Any]:
    """Train eflomal on Tatoeba train + all Hansards sentences; links for each Hansards split."""
    import eflomal

    src_path, tgt_path = parallel_split("tatoeba-eng-fra", "train")
    with gzip.open(src_path, "rt") as f, gzip.open(tgt_path, "rt") as g:
        pairs = list(zip(f.read().splitlines(), g.read().splitlines()))[:limit]
    src = [normalize(s) for s, _ in pairs]
    tgt = [normalize(t) for _, t in pairs]
    offsets = {}
    for name, (en, fr) in hansards.items():
        offsets[name] = (len(src), len(en))
        src += en
        tgt += fr
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        fwd, rev = f"{tmp}/fwd", f"{tmp}/rev"
        eflomal.Aligner().align(src, tgt, links_filename_fwd=fwd, links_filename_rev=rev, quiet=True)
        forward, backward = read_pharaoh(fwd, len(src)), read_pharaoh(rev, len(src))
    seconds = time.perf_counter() - start
    out: dict[str, Any] = {"seconds": round(seconds, 1), "training_pairs": len(src)}
    for name, (first, count) in offsets.items():
        f, b = forward[first : first + count], backward[first : first + count]
        out[name] = {
            "forward": f,
            "grow-diag-final": [grow_diag(x, y, final=True) for x, y in zip(f, b)],
            "intersection": [x & y for x, y in zip(f, b)],
        }
    return out


def attnkit_links(args: argparse.Namespace, sources: list[str], targets: list[str]) -> dict[str, list[Links]]:
    from attnkit import align as default_align

    forward = load_translator(args.model, backend="torch", rerank=False)
    att = word_matrices(forward, sources, targets)
    rows = {
        "align, the default (grad, mean, intersect, lexical 0.6)": default_align(sources, targets).links,
        "align --lexical 0 (the default before the tables)": default_align(sources, targets, lexical=0).links,
        "align --scores attention (lexical 0.6)": default_align(sources, targets, scores="attention").links,
        "attention argmax": [align(m, "argmax") for m in att],
        "attention intersect": [align(m, "intersect") for m in att],
    }
    if args.saliency:
        sal = word_matrices(forward, sources, targets, scores="saliency")
        rows["saliency intersect"] = [align(m, "intersect") for m in sal]
    if args.reverse_model:
        back = word_matrices(
            load_translator(args.reverse_model, backend="torch", rerank=False), targets, sources
        )
        for how in ("intersection", "grow-diag", "grow-diag-final", "mean"):
            for method in ("argmax", "intersect") if how == "mean" else ("argmax",):
                rows[f"both directions, {how} ({method})"] = [
                    symmetrize(f, b, how, method) for f, b in zip(att, back)
                ]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--hansards", required=True, help="folder with {trial,test}.en-fr.{en,fr,naacl}")
    parser.add_argument("--model", default="enfr-rnn")
    parser.add_argument("--reverse-model", default="fren-rnn", help="a French->English model ('': none)")
    parser.add_argument("--saliency", action="store_true", help="also gradient-saliency links (slow)")
    parser.add_argument("--limit", type=int, default=None, help="eflomal: first N Tatoeba pairs only")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    folder = Path(args.hansards)
    data = {
        split: tuple(
            (folder / f"{split}.en-fr.{lang}").read_text(encoding="utf-8").splitlines()
            for lang in ("en", "fr")
        )
        for split in ("trial", "test")
    }
    peer = eflomal_links({k: (v[0], v[1]) for k, v in data.items()}, args.limit)
    results: dict[str, dict[str, Any]] = {}
    for split, (en, fr) in data.items():
        sure, possible = read_naacl(folder / f"{split}.en-fr.naacl", len(en))
        rows = {f"eflomal {k}": v for k, v in peer[split].items()}
        rows.update({f"attnkit {k}": v for k, v in attnkit_links(args, en, fr).items()})
        for name, links in rows.items():
            score = aer(links, sure, possible)
            low, high = aer_interval(links, sure, possible)
            results.setdefault(name, {})[split] = {
                "aer": round(score.aer, 4),
                "precision": round(score.precision, 4),
                "recall": round(score.recall, 4),
                "interval": [round(low, 4), round(high, 4)],
            }
    if args.json:
        print(json.dumps({"eflomal_seconds": peer["seconds"], "results": results}, indent=2))
        return
    best_peer = results["eflomal grow-diag-final"]["test"]["aer"]
    print(f"eflomal trained and aligned {peer['training_pairs']} pairs in {peer['seconds']} s")
    columns = f"{'trial AER':>9} {'test AER':>9} {'95% (test)':>15} {'P':>7} {'R':>7} {'x eflomal':>9}"
    print(f"{'method':<62} {columns}")
    for name, by_split in results.items():
        t = by_split["test"]
        ratio = t["aer"] / best_peer if best_peer else float("nan")
        interval = "{:.3f}-{:.3f}".format(*t["interval"])
        print(
            f"{name:<62} {by_split['trial']['aer']:>9.4f} {t['aer']:>9.4f} {interval:>15} "
            f"{t['precision']:>7.4f} {t['recall']:>7.4f} {ratio:>9.2f}"
        )


if __name__ == "__main__":
    main()
