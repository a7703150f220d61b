"""``attnkit faithfulness``: how far attention can be trusted, in numbers.

A classifier (``--data`` labelled reviews): erase the words or sentences that attention, gradient x
input, integrated gradients, leave-one-out and random rankings call important; report comprehensiveness,
sufficiency and AOPC with 95% bootstrap intervals. A translator (``--src --tgt --gold``): word alignments
from attention, from maps derived from it (``--scores``) and from gradient saliency, scored by AER.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import UsageError
from ..files import json_text
from ..log import log


def add_parser(sub: Any, name: str) -> None:
    from ..names import ALIGNMENT_METHODS, ALIGNMENT_SCORES, ATTRIBUTION_METHODS

    p = sub.add_parser(
        name, help="is attention faithful? erasure curves (HAN) or attention vs saliency AER (translator)"
    )
    p.add_argument("--model", default=None, help="checkpoint or shipped model (default: the shipped one)")
    p.add_argument("--data", help="classifier: labelled documents, JSONL or CSV with text and label fields")
    p.add_argument("--limit", type=int, default=None, help="only the first N documents or sentence pairs")
    p.add_argument(
        "--methods",
        default=None,
        help="comma-separated; classifier: " + ", ".join(ATTRIBUTION_METHODS) + " (default all); "
        "translator: " + ", ".join(ALIGNMENT_METHODS) + " (default argmax,intersect)",
    )
    p.add_argument(
        "--scores",
        default="attention,saliency",
        help="translator: comma-separated maps links are read from: "
        + ", ".join(ALIGNMENT_SCORES)
        + " (default attention,saliency)",
    )
    p.add_argument(
        "--fractions", default="0,0.05,0.1,0.2,0.5", help="k values in 0..1, the share of units erased"
    )
    p.add_argument("--seeds", type=int, default=3, help="random rankings averaged (default 3)")
    p.add_argument("--steps", type=int, default=32, help="integrated-gradients steps (default 32)")
    p.add_argument("--samples", type=int, default=1000, help="bootstrap samples (default 1000)")
    p.add_argument("--src", help="translator: source sentences, whitespace-tokenized words")
    p.add_argument("--tgt", help="translator: target sentences, line-aligned with --src")
    p.add_argument("--gold", help="translator: gold links, NAACL format 'SENT SRC TGT S|P' (1-based)")
    p.add_argument("--json", action="store_true", help="print the whole report as JSON")
    p.add_argument("--out", metavar="FILE.json", help="write the report to this file")
    p.add_argument("--plot", metavar="FILE", help="classifier: the erasure curves as .png, .svg or .pdf")
    p.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:N, or auto")
    p.set_defaults(run=run)


def _check(args: argparse.Namespace) -> str:
    """'classifier' or 'translator' from the inputs given; bad numbers are ValueErrors."""
    pair = [args.src, args.tgt, args.gold]
    if args.data and any(pair):
        raise UsageError("give --data (classifier) or --src, --tgt and --gold (translator), not both")
    if not args.data and not all(pair):
        raise UsageError("give --data FILE (classifier) or all of --src, --tgt and --gold (translator)")
    for name in ("limit", "seeds", "steps", "samples"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise UsageError(f"--{name} must be at least 1, got {value}")
    if args.plot and not args.data:
        raise UsageError("--plot draws the classifier's erasure curves: it needs --data")
    from ..files import refuse_overwrite, refuse_same_outputs

    inputs = {"--data": args.data, "--src": args.src, "--tgt": args.tgt, "--gold": args.gold}
    for flag in ("out", "plot"):
        if getattr(args, flag):
            refuse_overwrite(getattr(args, flag), inputs, f"--{flag}")
    refuse_same_outputs({"--out": args.out, "--plot": args.plot})
    return "classifier" if args.data else "translator"


def _fractions(text: str) -> list[float]:
    from ..evaluation.faithfulness import check_fractions

    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--fractions must be comma-separated numbers in 0..1, got {text!r}") from None
    return check_fractions(values)


def _methods(text: str | None, valid: tuple[str, ...], default: tuple[str, ...]) -> list[str]:
    methods = [m.strip() for m in text.split(",") if m.strip()] if text else list(default)
    unknown = [m for m in methods if m not in valid]
    if unknown or not methods:
        raise UsageError(f"unknown method {unknown[0] if unknown else text!r}; valid: {', '.join(valid)}")
    return methods


def run(args: argparse.Namespace) -> int:
    kind = _check(args)
    report = _classifier(args) if kind == "classifier" else _translator(args)
    if args.out:
        from ..files import atomic_write_json

        atomic_write_json(args.out, report)
    if args.plot:
        from ..visualization.faithfulness import plot_faithfulness

        plot_faithfulness(report, args.plot)
        log.info(f"curves written to {args.plot}")
    print(json_text(report, indent=2) if args.json else _summary(report))
    return 0


def _refuse_export(model: str | None) -> None:
    """faithfulness reads gradients of the torch model: an ONNX export folder is one line saying so (the
    command has no --backend to switch)."""
    from pathlib import Path

    if model is not None and (Path(model) / "manifest.json").is_file():
        raise UsageError(
            f"{model} is an ONNX export: faithfulness reads gradients of the torch model; give the "
            "checkpoint it was exported from (or a shipped name)"
        )


def _classifier(args: argparse.Namespace) -> dict[str, Any]:
    from ..api import load_classifier
    from ..data.documents import document_ids, read_documents
    from ..evaluation.faithfulness import han_faithfulness
    from ..explain.attribution import ProbabilityModel
    from ..names import ATTRIBUTION_METHODS

    chosen = _methods(args.methods, ATTRIBUTION_METHODS, ATTRIBUTION_METHODS)
    fractions = _fractions(args.fractions)
    _refuse_export(args.model)
    classifier = load_classifier(args.model, device=args.device, backend="torch")
    docs, _ = read_documents(args.data, labels=classifier.labels)
    docs = docs[: args.limit]
    if not docs:
        raise UsageError(f"{args.data}: no documents (expected JSON lines with a text and a label)")
    prob: Any
    if classifier.backend == "hf":  # a Hugging Face classifier: pieces as units
        from ..hf.faithfulness import HFProbability

        prob = HFProbability(classifier)
        ids = prob.documents([d.text for d in docs])
    else:
        ids = document_ids(docs, classifier.vocab)
        prob = ProbabilityModel(classifier.model.cpu(), classifier.prior_bias)
    # by default every method that applies to the model; one that was asked for and does not is an error
    methods = chosen if args.methods else [m for m in chosen if m in prob.methods]
    report = han_faithfulness(
        prob, list(ids), methods, fractions, args.seeds, args.steps, samples=args.samples
    )
    predicted = [r.label for r in classifier.classify_documents(docs)]
    correct = sum(classifier.labels[d.label] == p for d, p in zip(docs, predicted))
    report.update({"model": classifier.path, "data": args.data, "accuracy": round(correct / len(docs), 4)})
    return report


def _translator(args: argparse.Namespace) -> dict[str, Any]:
    from ..alignment.links import read_naacl
    from ..api import load_translator
    from ..data.parallel import read_lines
    from ..evaluation.faithfulness import alignment_faithfulness
    from ..names import ALIGNMENT_METHODS, ALIGNMENT_SCORES

    methods = _methods(args.methods, ALIGNMENT_METHODS, ("argmax", "intersect"))
    kinds = _methods(args.scores, ALIGNMENT_SCORES, ("attention", "saliency"))
    sources, targets = read_lines(args.src), read_lines(args.tgt)
    if len(sources) != len(targets):
        raise UsageError(f"{args.src} has {len(sources)} lines but {args.tgt} has {len(targets)}")
    lengths = [(len(s.split()), len(t.split())) for s, t in zip(sources, targets)]
    sure, possible = read_naacl(args.gold, len(sources), lengths)
    n = args.limit or len(sources)
    _refuse_export(args.model)
    translator = load_translator(args.model, device=args.device, backend="torch", rerank=False)
    report = alignment_faithfulness(
        translator, sources[:n], targets[:n], sure[:n], possible[:n], methods, args.samples, kinds
    )
    report.update({"model": translator.path, "src": args.src, "tgt": args.tgt, "gold": args.gold})
    return report


def _summary(report: dict[str, Any]) -> str:
    lines = []
    if "scores" in report:
        lines.append(f"{report['n_sentences']} sentence pairs; AER (95% CI), lower is better")
        for kind, by_method in report["scores"].items():
            for method, s in by_method.items():
                lo, hi = s["aer_ci95"]
                lines.append(f"  {kind:<10} {method:<10} AER {s['aer']:.4f} ({lo:.4f}-{hi:.4f})")
        for kind, agree in report["argmax_agreement"].items():
            lines.append(f"  attention argmax = {kind} argmax for {agree['mean']:.1%} of target words")
        return "\n".join(lines)
    lines.append(f"{report['n_documents']} documents; AOPC (95% CI): comprehensiveness up, sufficiency down")
    for units in ("word", "sentence"):
        for method in report["methods"]:
            comp = report[units][method]["comprehensiveness"]["aopc"]
            suff = report[units][method]["sufficiency"]["aopc"]
            lines.append(
                f"  {units:<8} {method:<20} comp {comp['mean']:+.4f} {comp['ci95']}  "
                f"suff {suff['mean']:+.4f} {suff['ci95']}"
            )
    return "\n".join(lines)
