"""``attnkit classify [TEXT ...]`` and ``attnkit evaluate-classifier --data F``."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import UsageError
from ..files import json_text
from ..log import log
from .options import add_backend


def add_parser(sub: Any, name: str) -> None:
    if name == "classify":
        p = sub.add_parser(name, help="predict review stars with word and sentence attention (HAN)")
        p.add_argument("text", nargs="*", help="documents; read from stdin, one per line, when none")
        p.add_argument("--model", default=None, help="checkpoint or shipped classifier (default: shipped)")
        p.add_argument("--json", action="store_true", help="one JSON object per document")
        p.add_argument(
            "--html", metavar="FILE", help="write the explorer's classify view as one offline page"
        )
        _prior_option(p)
        p.set_defaults(run=run_classify)
        return
    p = sub.add_parser(name, help="accuracy, macro-F1, per-class F1 and confusion matrix on labelled data")
    p.add_argument("--model", default=None, help="checkpoint or shipped classifier (default: shipped)")
    p.add_argument("--data", required=True, help="JSONL (or CSV) with text and label fields")
    p.add_argument("--text-field", default="text", help="the JSONL/CSV field holding the text")
    p.add_argument("--label-field", default="label", help="the JSONL/CSV field holding the gold label")
    p.add_argument("--title-field", default="title", help="prepended as the first sentence; '' to ignore")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    _prior_option(p)
    p.set_defaults(run=run_evaluate)


def _prior_option(p: argparse.ArgumentParser) -> None:
    add_backend(p)
    p.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:N, or auto (CUDA when present)")
    p.add_argument(
        "--prior-correction",
        type=float,
        default=None,
        metavar="TAU",
        help="divide the training class weights out of the decision to this power, 0-1 "
        "(default: the model's own setting; 0 = the trained model as is)",
    )
    p.add_argument(
        "--int8",
        action="store_true",
        help="int8 weights (torch dynamic quantization, or the export's int8 graphs)",
    )


def _load(args: argparse.Namespace) -> Any:
    from ..api import load_classifier

    return load_classifier(args.model, args.prior_correction, args.device, args.backend, int8=args.int8)


def run_classify(args: argparse.Namespace) -> int:
    from ..data.documents import MAX_SENTENCES, MAX_WORDS
    from ..files import atomic_write_text
    from ..results import prior_json
    from ..visualization.explorer import static_page
    from .inputs import stdin_lines

    texts = list(args.text) if args.text else stdin_lines(skip_blank=True)
    if not texts:
        raise UsageError("no input: give documents as arguments or on stdin")
    classifier = _load(args)
    results = classifier.classify(texts)
    for r in results:
        if args.json:
            print(json_text(r.to_json(), ensure_ascii=False))
        else:
            top = max(r.probabilities.values())
            print(f"{r.label} stars (p={top:.2f})  {r.text[:70]}")
    if args.html:
        data = {
            "view": "classify",
            "results": [r.to_json() for r in results],
            "prior": prior_json(classifier),
            "limits": {"max_sentences": MAX_SENTENCES, "max_words": MAX_WORDS},
        }
        atomic_write_text(args.html, static_page(data))
        log.info(f"explorer page written to {args.html}")
    return 0


def run_evaluate(args: argparse.Namespace) -> int:
    from ..data.documents import read_documents
    from ..evaluation.classification import bootstrap_intervals, classification_report

    classifier = _load(args)
    docs, _ = read_documents(
        args.data, args.text_field, args.label_field, args.title_field, classifier.labels
    )
    if not docs:
        raise UsageError(f"{args.data} has no documents to evaluate")
    preds = [classifier.labels.index(r.label) for r in classifier.classify_documents(docs)]
    report = classification_report([d.label for d in docs], preds, len(classifier.labels))
    report["labels"], report["model"], report["data"] = classifier.labels, classifier.path, args.data
    report["ci95"] = bootstrap_intervals([d.label for d in docs], preds, len(classifier.labels))
    bias = classifier.prior_bias
    report["prior_bias"] = None if bias is None else [round(float(b), 5) for b in bias]
    if args.json:
        print(json_text(report, indent=2))
    else:
        ci = report["ci95"]
        print(
            f"accuracy {report['accuracy']:.4f} {ci['accuracy']}  macro-F1 {report['macro_f1']:.4f} "
            f"{ci['macro_f1']}  n={report['n_documents']} (95% bootstrap intervals)"
        )
        print(
            "per-class F1: "
            + "  ".join(f"{c}:{f:.3f}" for c, f in zip(classifier.labels, report["per_class_f1"]))
        )
        print("confusion (rows gold, columns predicted):")
        for c, row in zip(classifier.labels, report["confusion"]):
            print(f"  {c}: " + " ".join(f"{x:5d}" for x in row))
    return 0
