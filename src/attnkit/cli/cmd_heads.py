"""``attnkit heads [MODEL] --src F --ref F``: which attention heads a Transformer translator needs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..files import json_text


def add_parser(sub: Any, name: str) -> None:
    p = sub.add_parser(
        name,
        help="mask each attention head in turn: BLEU and loss change, pruning curve, confidence, sinks",
    )
    p.add_argument(
        "model", nargs="?", default=None, help="checkpoint or shipped Transformer (default: the shipped one)"
    )
    p.add_argument("--model", dest="model_option", default=None, help="the same as MODEL")
    p.add_argument("--src", required=True, help="source sentences (dev data), one per line")
    p.add_argument("--ref", required=True, help="reference translations, line-aligned with --src")
    p.add_argument("--limit", type=int, default=None, help="only the first N pairs")
    p.add_argument("--beam", type=int, default=1, help="beam size of the BLEU decodes (default 1: greedy)")
    p.add_argument("--steps", type=int, default=10, help="points on the pruning curve (default 10)")
    p.add_argument("--json", action="store_true", help="print the whole report as JSON")
    p.add_argument("--out", metavar="FILE.json", help="write the report to this file")
    p.add_argument("--plot", metavar="FILE", help="heatmaps and pruning curve as .png, .svg or .pdf")
    p.add_argument(
        "--html", metavar="FILE", help="the explorer's Heads view of the report as one offline page"
    )
    p.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:N, or auto")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..api import load_translator
    from ..data.parallel import read_lines
    from ..evaluation.heads import check_model, head_report

    if args.model and args.model_option:
        raise UsageError("give the model once: as MODEL or as --model")
    for name in ("limit", "beam", "steps"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise UsageError(f"--{name} must be at least 1, got {value}")
    if args.plot:
        from ..visualization.heatmap import check_path

        check_path(args.plot)
    from ..files import refuse_overwrite, refuse_same_outputs

    refuse_same_outputs({"--out": args.out, "--plot": args.plot, "--html": args.html})
    model = args.model or args.model_option
    inputs = {"--src": args.src, "--ref": args.ref, "the model": model}
    for flag in ("plot", "html", "out"):
        if getattr(args, flag):
            refuse_overwrite(getattr(args, flag), inputs, f"--{flag}")
    if model and (Path(model) / "manifest.json").is_file():
        raise UsageError(
            f"heads masks the heads of an attnkit Transformer checkpoint; {model} is an ONNX export: give "
            "the checkpoint it was exported from"
        )
    sources, references = read_lines(args.src)[: args.limit], read_lines(args.ref)[: args.limit]
    if len(sources) != len(references):
        raise UsageError(f"{args.src} has {len(sources)} lines but {args.ref} has {len(references)}")
    if not sources:
        raise UsageError(f"{args.src} has no sentences")
    translator = load_translator(
        args.model or args.model_option, device=args.device, backend="torch", rerank=False
    )
    from ..pretrained import DEFAULTS

    check_model(translator, str(args.model or args.model_option or DEFAULTS["translation"]))
    report = head_report(translator, sources, references, args.beam, args.steps)
    from ..pretrained import DEFAULTS

    report["model"] = str(args.model or args.model_option or DEFAULTS["translation"])  # as the user named it
    if args.out:
        from ..files import atomic_write_json

        atomic_write_json(args.out, report)
    if args.plot:
        from ..visualization.heads import plot_heads

        plot_heads(report, args.plot)
    if args.html:
        from ..files import atomic_write_text
        from ..visualization.explorer import static_page

        atomic_write_text(args.html, static_page({"view": "heads", "report": report}))
    print(json_text(report, indent=2) if args.json else summary(report))
    return 0


def summary(report: dict[str, Any]) -> str:
    base = report["baseline"]
    lines = [
        f"{report['n_sentences']} pairs, beam {report['beam']}: BLEU {base['bleu']}, loss {base['loss']}"
    ]
    lines.append("part     layer head  dBLEU   dloss  confidence")
    for r in report["heads"]:
        lines.append(
            f"{r['part']:<8} {r['layer']:>5} {r['head']:>4} {r['delta_bleu']:>+6.2f} {r['delta_loss']:>+7.4f}"
            f"  {r['confidence']:.3f}"
        )
    lines.append(
        "pruning (least important first): "
        + ", ".join(f"{p['pruned']}: {p['bleu']}" for p in report["pruning"])
    )
    for part, layers in report["sinks"].items():
        for s in layers:
            eos = "" if s["eos"] is None else f"</s> {s['eos']:.3f}, "
            lines.append(
                f"sinks {part} layer {s['layer']}: {eos}first {s['first']:.3f}, punctuation {s['punct']:.3f}"
            )
    return "\n".join(lines)
