"""``attnkit caption IMAGE...`` and ``attnkit evaluate-captioner --data ...`` (Show, Attend and Tell)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..files import json_text
from ..log import log
from .options import add_backend


def add_parser(sub: Any, name: str) -> None:
    if name == "caption":
        p = sub.add_parser(name, help="caption images and show where the model looked for each word")
        p.add_argument("images", nargs="+", help="image files (PNG, JPEG, BMP, TIFF, ...)")
        p.add_argument("--beam", type=int, default=1, help="beam size (1 = greedy, the default)")
        p.add_argument("--n-best", type=int, default=1, help="also list the n best captions (<= --beam)")
        p.add_argument(
            "--plot",
            metavar="FILE",
            help="the paper's figure: each word's attention over the image "
            "(.png, .svg or .pdf; with several images, one file each: NAME-1.png, ...)",
        )
        p.add_argument("--html", metavar="FILE", help="one offline page: hover a word to see its attention")
        p.add_argument(
            "--json",
            action="store_true",
            help="one JSON object per image (caption, tokens, "
            "attention: per token h rows x w columns summing to 1, tiling the image)",
        )
        _model_options(p)
        p.set_defaults(run=run_caption)
        return
    p = sub.add_parser(
        name, help="exact match, word accuracy, BLEU-4 and attention correctness of a captioner"
    )
    p.add_argument(
        "--data",
        required=True,
        help="digits:dev or digits:test (the generated digit strings, with "
        "boxes), or a captions file: Flickr8k-style IMAGE#N<TAB>caption lines or COCO JSON",
    )
    p.add_argument("--images", default=None, help="the image folder of a captions file (default: its folder)")
    p.add_argument("--limit", type=int, default=0, help="evaluate the first N images only (0 = all)")
    p.add_argument("--beam", type=int, default=1, help="beam size (1 = greedy)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    _model_options(p)
    p.set_defaults(run=run_evaluate)


def _model_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        default=None,
        help="checkpoint, export folder or shipped captioner (default: digits-captioner)",
    )
    add_backend(p)
    p.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:N, or auto")


def _load(args: argparse.Namespace) -> Any:
    from ..api import load_captioner

    return load_captioner(args.model, args.device, args.backend)


def _plots(args: argparse.Namespace) -> list[Path]:
    return _plot_paths(args.plot, len(args.images)) if args.plot else []


def _plot_paths(target: str, count: int) -> list[Path]:
    path = Path(target)
    if path.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise UsageError(f"--plot {target}: the file must end in .png, .svg or .pdf")
    if count == 1:
        return [path]
    return [path.with_name(f"{path.stem}-{i}{path.suffix}") for i in range(1, count + 1)]


def run_caption(args: argparse.Namespace) -> int:
    from ..files import refuse_overwrite, refuse_same_outputs

    refuse_same_outputs({"--html": args.html, **{f"--plot ({p})": p for p in _plots(args)}})
    inputs = {f"image {i + 1}": path for i, path in enumerate(args.images)}
    for flag, out in (("--html", args.html), *(("--plot", p) for p in _plots(args))):
        if out is not None:
            refuse_overwrite(out, inputs, flag)  # before any work: an image is never replaced by a picture
    captioner = _load(args)
    results = captioner.caption_files(args.images, beam_size=args.beam, n_best=args.n_best)
    for r in results:
        for note in r.warnings:
            print(f"note: {note}", file=sys.stderr)
        if args.json:
            print(json_text(r.to_json(), ensure_ascii=False))
            continue
        print(f"{r.caption}\t{r.source}")
        for rank, alt in enumerate(r.alternatives, 2):
            print(f"  {rank}. {alt.caption}  ({alt.score:.3f})")
    if args.plot:
        from ..visualization.captions import plot_caption

        for r, path in zip(results, _plot_paths(args.plot, len(results))):
            plot_caption(r, captioner.load_display(r.source), path)
            log.info(f"attention figure written to {path}")
    if args.html:
        from ..files import atomic_write_text
        from ..visualization.captions import caption_page

        atomic_write_text(
            args.html, caption_page(results, [captioner.load_display(r.source) for r in results])
        )
        log.info(f"caption page written to {args.html}")
    return 0


def _examples(args: argparse.Namespace) -> list[tuple[Any, tuple[str, ...], Any]]:
    """(image: an array or a path, reference words, boxes or None) of --data."""
    if args.data.startswith("digits:"):
        from ..datasets import digits

        split = args.data.split(":", 1)[1]
        if split not in ("dev", "test"):
            raise UsageError(
                f"--data {args.data}: the digit splits to evaluate are digits:dev and digits:test"
            )
        strings = digits.digit_strings(split, args.limit or digits.SIZES[split])
        return [(s.image, tuple(s.caption.split()), s.boxes) for s in strings]
    from ..data.captions import read_captions

    items = read_captions(args.data, args.images)
    return [(item.path, item.captions[0], None) for item in items][: args.limit or None]


def run_evaluate(args: argparse.Namespace) -> int:

    if args.limit < 0:
        raise UsageError(f"--limit must be >= 0, got {args.limit}")
    captioner = _load(args)
    examples = _examples(args)
    if not examples:
        raise UsageError(f"{args.data}: no images to evaluate")
    report = captioner.evaluate(examples, beam_size=args.beam)
    report = {**report, "model": getattr(captioner, "path", ""), "data": args.data, "beam": args.beam}
    if args.json:
        print(json_text(report, indent=2))
        return 0
    print(f"{report['images']} images, beam {args.beam} (95% bootstrap intervals)")
    print(f"exact match      {report['exact_match']:.4f} {report['exact_match_ci']}")
    print(f"word accuracy    {report['token_accuracy']:.4f} {report['token_accuracy_ci']}")
    print(f"BLEU-4           {report['bleu4']:.2f}")
    if report.get("attention_correctness") is not None:
        print(
            f"attention in box {report['attention_correctness']:.4f} {report['attention_correctness_ci']}"
            f"  (uniform attention: {report['uniform_correctness']:.4f})"
        )
    return 0
