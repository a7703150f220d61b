"""Ship a trained checkpoint inside the package: fp16 weights + config + tokenizer + training report.

    python scripts/ship_model.py runs/tatoeba-rnn-bahdanau/best.pt enfr-rnn \
        --dev-report runs/reports/rnn-bahdanau.dev.json --test-report runs/reports/rnn-bahdanau.test.json

A new model replaces the shipped one only if its dev score is higher (dev BLEU for translators,
dev macro-F1 for classifiers; never the test score); --force overrides. Older versions stay in git history.

What a re-ship costs the repository: the model's files are replaced in place (never kept beside the old
ones) and committed once with their export and ``assets.json``; the new blobs compress little (fp16
weights), so .git grows by about the folder's size each time. Measured with git cat-file on the shipped
folders (files -> in .git): enfr-rnn 30.6 -> 9.5 MB, fren-rnn 23.7 -> 16.3 MB, enfr-transformer and
ende-transformer 45.8 -> 35.8 MB, reviews-han 15.8 -> 13.9 MB; .git was 184 MB in all. Re-ship a model
when its dev score moves, not for each experiment; users fetch models by name (``attnkit fetch``), so a
future release can move them to a download location without changing the package.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sys
from pathlib import Path

from attnkit import __version__
from attnkit.checkpoint import Checkpoint, atomic_write_json, inference_payload, load_checkpoint, save_payload
from attnkit.config import to_dict
from attnkit.datasets import document_split, parallel_split
from attnkit.pretrained import ROOT
from attnkit.training.prior import check_tau, stored_class_weights


def sha256_gz(path: Path) -> str:
    with gzip.open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def data_checksums(task: str, dataset: str = "tatoeba-eng-fra") -> dict[str, str]:
    if task == "captioning":  # generated digit strings: the canonical splits' fingerprints (docs/digits.md)
        from attnkit.datasets import digits

        return {
            f"digits/{s}": digits.checksum(digits.digit_strings(s, digits.SIZES[s])) for s in ("dev", "test")
        }
    if task == "classification":
        return {
            f"reviews/{s}.jsonl": sha256_gz(document_split("reviews", s)) for s in ("train", "dev", "test")
        }
    out = {}
    for split in ("train", "dev", "test"):
        for path in parallel_split(dataset, split):
            out[f"{dataset}/{path.name[:-3]}"] = sha256_gz(path)
    return out


def wall_minutes(history: list[dict]) -> float:
    """Training wall time over every ``--resume`` segment: elapsed_minutes restarts in each one."""
    total, last = 0.0, 0.0
    for entry in history:
        elapsed = float(entry.get("elapsed_minutes", 0.0))
        if elapsed < last:
            total += last
        last = elapsed
    return round(total + last, 2)


def member_reports(ckpt: Checkpoint) -> list[dict]:
    """For an ensemble (``attnkit ensemble``): each member's config, updates, wall time and validations."""
    out = []
    for path in ckpt.ensemble_of or []:
        member = load_checkpoint(path)
        history = member.history()
        model = to_dict(member.config.model)
        out.append(
            {
                "checkpoint": path,
                "seed": member.config.training.seed,
                "model": {"name": model["name"], model["name"]: model[model["name"]]},
                "steps": member.step,
                "train_minutes": wall_minutes(history),
                "validations": history,
            }
        )
    return out


def parent_report(ckpt: Checkpoint) -> dict | None:
    """For a run started with ``training.init_from``: the parent's updates and wall time (read before the
    parent, if it is the shipped model being replaced, is overwritten)."""
    parent = ckpt.config.training.init_from
    if not parent:
        return None
    shipped = ROOT / parent / "training_report.json"
    if shipped.exists():
        report = json.loads(shipped.read_text())
        return {
            "init_from": parent,
            "steps": report["steps"],
            "train_minutes": report["train_minutes"],
            "source_checkpoint": report.get("source_checkpoint"),
            "dev": report.get("dev", {}),
            "test": report.get("test", {}),
            "validations": report.get("validations", []),  # the parent's history stays in the report
        }
    member = load_checkpoint(parent)
    history = member.history()
    return {
        "init_from": parent,
        "steps": member.step,
        "train_minutes": wall_minutes(history),
        "tokens_seen": member.tokens_seen,
        "provenance": member.provenance or {},
        "validations": history,
    }


def own_minutes(ckpt: Checkpoint, members: list[dict], parent: dict | None) -> float:
    """Wall time of all segments (of ensemble members; plus the init_from parent), validations included."""
    if members:
        return round(sum(m["train_minutes"] for m in members), 2)
    history = ckpt.history()
    return round(wall_minutes(history) + (parent["train_minutes"] if parent else 0.0), 2)


def wall_time(path: Path) -> dict:
    """train_minutes = the measured wall time of members trained side by side (the sum is kept too)."""
    wall = json.loads(path.read_text())
    return {"train_minutes": wall["wall_minutes"], "trained_side_by_side": wall}


def hardware(ckpt: Checkpoint, parent: dict | None) -> dict:
    """Where each training segment ran (the run's provenance, and its init_from parent's)."""
    out = {"this run": ckpt.provenance or {}}
    if parent and parent.get("provenance"):
        out["init_from run"] = parent["provenance"]
    return out


def extra_reports(args: argparse.Namespace) -> dict:
    out = {}
    if args.int8_dev_report:
        out["int8"] = {"dev": json.loads(args.int8_dev_report.read_text())}
        if args.int8_test_report:
            out["int8"]["test"] = json.loads(args.int8_test_report.read_text())
    if args.latency_json:
        out["latency"] = json.loads(args.latency_json.read_text())
    return out


def cv_report(args: argparse.Namespace) -> dict:
    """The recipe's cross-validation row (scripts/han_cv.py's cv.json) at the shipped members and tau, for a
    model trained on train + dev (--dev-in-training): its dev numbers are then not a held-out estimate."""
    out: dict = {}
    if args.dev_in_training:
        out["trained_on"] = ["train", "dev"]
    if args.cv_json:
        cv = json.loads(args.cv_json.read_text())
        tau = str(float(args.prior_correction or 0.0))
        chosen = cv[f"members{args.cv_members}"]
        out["cv"] = {
            "source": str(args.cv_json),
            "folds": len(chosen["folds"]),
            "members": args.cv_members,
            "tau": tau,
            **chosen["table"][tau],
        }
    return out


def dev_score(report: dict) -> float:
    """Dev BLEU (translators), macro-F1 (classifiers) or exact match (captioners)."""
    dev = report.get("dev", {})
    return float(dev.get("bleu", dev.get("macro_f1", dev.get("exact_match", float("-inf")))))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("checkpoint", type=Path)
    parser.add_argument("name")
    parser.add_argument(
        "--dev-report", type=Path, required=True, help="JSON from attnkit evaluate(-classifier)"
    )
    parser.add_argument("--test-report", type=Path, required=True)
    parser.add_argument(
        "--wall-json",
        type=Path,
        help="wall.json of scripts/train_han_ensemble.sh: its members trained side by side, so the training "
        "time is that wall time, not the sum of the members' minutes",
    )
    parser.add_argument(
        "--prior-correction",
        type=float,
        default=None,
        metavar="TAU",
        help="classifiers: the decision's prior correction (attnkit.training.prior), kept in the model",
    )
    parser.add_argument(
        "--replaces",
        help="a shipped model this one is meant to replace (e.g. as the default): refuse unless dev beats it",
    )
    parser.add_argument("--int8-dev-report", type=Path, help="the same evaluation with --int8")
    parser.add_argument("--int8-test-report", type=Path)
    parser.add_argument("--latency-json", type=Path, help="single-sentence latency measurements to keep")
    parser.add_argument("--cv-json", type=Path, help="scripts/han_cv.py's cv.json for this model's recipe")
    parser.add_argument("--cv-members", type=int, default=1, help="the row of --cv-json: members per model")
    parser.add_argument(
        "--dev-in-training", action="store_true", help="the model was trained on train + dev (needs --force)"
    )
    parser.add_argument(
        "--fp32", action="store_true", help="keep fp32 weights (small models whose reports were made in fp32)"
    )
    parser.add_argument("--force", action="store_true")
    args = parser.parse_args()
    ckpt = load_checkpoint(args.checkpoint)
    dev, test = json.loads(args.dev_report.read_text()), json.loads(args.test_report.read_text())
    history = ckpt.history()
    members = member_reports(ckpt)
    parent = parent_report(ckpt)
    report = {
        "name": args.name,
        "attnkit_version": __version__,
        "trained_with_version": ckpt.attnkit_version,
        "config": to_dict(ckpt.config),
        "data_sha256": data_checksums(ckpt.config.task, ckpt.config.data.dataset),
        "hardware": hardware(ckpt, parent),
        "tokens_seen": ckpt.tokens_seen,
        "steps": ckpt.step + (parent["steps"] if parent else 0),
        "train_minutes": own_minutes(ckpt, members, parent),
        **(wall_time(args.wall_json) if args.wall_json else {}),
        "train_step_minutes": round((ckpt.train_time or 0.0) / 60, 2),  # time inside training steps
        "tokens_per_second": history[-1].get("tokens_per_second") if history else None,
        "validations": history,
        "dev": dev,
        "test": test,
        "source_checkpoint": str(args.checkpoint),
        **({"prior_correction": args.prior_correction} if args.prior_correction is not None else {}),
        **extra_reports(args),
        **cv_report(args),
        **({"members": members} if members else {}),
        **({"parent": parent} if parent else {}),
    }
    target = ROOT / args.name
    old = target / "training_report.json"
    rival = ROOT / args.replaces / "training_report.json" if args.replaces else None
    if rival is not None and not args.force:
        theirs = json.loads(rival.read_text())
        if dev_score(report) <= dev_score(theirs):
            print(
                f"not shipped: dev score {dev_score(report)} <= {args.replaces}'s {dev_score(theirs)}",
                file=sys.stderr,
            )
            return 1
    if old.exists() and not args.force:
        previous = json.loads(old.read_text())
        if dev_score(report) <= dev_score(previous):
            print(
                f"not shipped: dev score {dev_score(report)} <= shipped {dev_score(previous)}",
                file=sys.stderr,
            )
            return 1
    target.mkdir(parents=True, exist_ok=True)
    small = inference_payload(ckpt, fp16=not args.fp32)  # tied weights stay one storage
    if args.prior_correction is not None:
        small["prior_correction"] = check_tau(args.prior_correction)
        small["class_weights"] = stored_class_weights(ckpt)
    save_payload(small, target / "model.pt")
    atomic_write_json(old, report)
    size = (target / "model.pt").stat().st_size / 2**20
    print(f"shipped {args.name}: {size:.1f} MiB, dev {dev_score(report)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
