"""``attnkit inspect --model M TEXT | --file F [--generate N] [--layers L] [--heads H] [--rows R]
[--json | --html FILE | --plot FILE]``: a decoder-only LM's attention over a long text
(``attnkit.inspect``)."""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from ..errors import UsageError
from ..log import log

INDICES = "indices and slices, Python-style, comma-separated (e.g. -64: or 0,5,10:20)"


def add_parser(sub: Any, name: str) -> None:
    p = sub.add_parser(
        name,
        help="a decoder-only LM's attention over a long text: what each token receives, head roles, rows",
        description="Attention of a decoder-only language model (Llama, Qwen2, Mistral, Gemma, Phi, GPT-2 "
        "style; default: the shipped enfr-llama) over a text of thousands of tokens, in bounded memory: the "
        "attention each token receives per layer, each head's role, and the rows asked for.",
    )
    p.add_argument("text", nargs="?", help="the text (or --file)")
    p.add_argument("--model", default=None, help="shipped name or Hugging Face folder (default: enfr-llama)")
    p.add_argument("--file", help="read the text from this UTF-8 file")
    p.add_argument("--generate", type=int, default=0, metavar="N", help="append N greedily generated tokens")
    p.add_argument(
        "--max-tokens", type=int, default=None, metavar="N", help="read only the text's first N tokens"
    )
    p.add_argument("--layers", help=f"layers whose rows are kept: {INDICES} (default: the last)")
    p.add_argument("--heads", help=f"query heads whose rows are kept: {INDICES} (default: all)")
    p.add_argument(
        "--rows",
        help=f"token positions whose rows are kept: {INDICES} (default: the last "
        "token, or the generated ones)",
    )
    p.add_argument("--no-probe", action="store_true", help="skip the induction probe (no induction role)")
    p.add_argument(
        "--map",
        action="append",
        choices=("rollout", "grad"),
        default=[],
        help="a derived map of the same rows (repeatable): rollout (any length), grad (up to 1,024 tokens)",
    )
    out = p.add_mutually_exclusive_group()
    out.add_argument(
        "--json", action="store_true", help="one JSON object: tokens, received, head_stats, captured"
    )
    out.add_argument("--html", metavar="FILE", help="the explorer's long-context view as one offline page")
    out.add_argument(
        "--plot", metavar="FILE", help="a picture (PNG, SVG or PDF): received per layer, head roles"
    )
    # "-64:" and "-3:-1" are values here, not options (argparse reads only "-64" as a negative number)
    p._negative_number_matcher = re.compile(r"^-\d[\d:,\-]*$")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..files import json_text, refuse_overwrite
    from ..inspecting import inspect

    if (args.text is None) == (args.file is None):
        raise UsageError("give a TEXT or --file FILE (one of them)")
    if args.generate < 0 or args.generate > 4096:
        raise UsageError(f"--generate must be in 0..4096, got {args.generate}")
    for flag, out in (("--html", args.html), ("--plot", args.plot)):
        if out is not None:
            refuse_overwrite(out, {"--file": args.file}, flag)
    result = inspect(
        args.model,
        args.text,
        file=args.file,
        generate=args.generate,
        layers=args.layers,
        heads=args.heads,
        rows=args.rows,
        probe=not args.no_probe,
        maps=args.map,
        max_tokens=args.max_tokens,
    )
    if args.json:
        print(json_text(result.to_json(), ensure_ascii=False))
    elif args.html:
        from ..files import atomic_write_text
        from ..visualization.explorer import static_page

        atomic_write_text(args.html, static_page({"view": "context", "result": result.to_json(digits=5)}))
        log.info(f"long-context view written to {args.html}")
    elif args.plot:
        from ..visualization.context import context_figure
        from ..visualization.heatmap import save_figure

        save_figure(context_figure(result), args.plot)
        log.info(f"picture written to {args.plot}")
    else:
        _summary(result, sys.stdout)
    return 0


def _summary(result: Any, out: Any) -> None:
    """What a reader wants first: the size, the tokens that receive most, the roles per layer."""
    t, (layers, heads) = len(result.tokens), result.entropy.shape
    print(
        f"{result.model}: {t} tokens ({t - result.prompt_tokens} generated), {layers} layers x {heads} heads "
        f"({result.kv_heads} key heads)",
        file=out,
    )
    mean = result.received.mean(0)
    for i in sorted(range(t), key=lambda i: -mean[i])[:5]:
        print(f"  receives {mean[i]:.4f}: token {i} {result.tokens[i]!r}", file=out)
    for layer, roles in enumerate(result.roles):
        print(f"layer {layer}: " + " ".join(f"{h}:{r}" for h, r in enumerate(roles)), file=out)
    rows = sorted({r for c in result.captured for r in c["rows"]})
    print(
        f"captured: {len(result.captured)} head rows of layers "
        f"{sorted({c['layer'] for c in result.captured})} at {len(rows)} positions (--json to read them)",
        file=out,
    )
