"""``attnkit translate [TEXT ...]``: translate arguments or stdin lines, with attention."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import UsageError
from ..files import json_text
from ..log import log
from .options import add_backend, add_engine, add_rerank, rerank_option


def add_parser(sub: Any, name: str) -> None:
    from ..names import ATTENTION_MAPS

    p = sub.add_parser(name, help="translate English sentences to French (default: the shipped model)")
    p.add_argument("text", nargs="*", help="sentences to translate; read from stdin, one per line, when none")
    p.add_argument("--model", default=None, help="checkpoint path or shipped model name (see `attnkit list`)")
    p.add_argument("--beam", type=int, default=5, help="beam size; 1 = greedy (default 5)")
    p.add_argument("--batch-size", type=int, default=64, help="sentences decoded together (default 64)")
    p.add_argument("--n-best", type=int, default=1, help="also return the next best hypotheses (JSON)")
    p.add_argument("--json", action="store_true", help="print one JSON object per line, attention included")
    p.add_argument("--plot", metavar="FILE", help="draw the attention of the first sentence (.png/.svg/.pdf)")
    p.add_argument(
        "--plot-heads",
        metavar="FILE",
        help="Transformers: draw every layer's and head's cross-attention of the first sentence as a grid",
    )
    p.add_argument(
        "--values",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="write the weight in each heatmap cell (default: for grids up to 12 x 12)",
    )
    p.add_argument(
        "--int8", action="store_true", help="int8 weights: faster CPU decoding of small batches (see README)"
    )
    p.add_argument(
        "--html",
        metavar="FILE",
        help="write the explorer's translate view of the results as one offline page",
    )
    p.add_argument("--words", action="store_true", help="plot word-level attention (subwords merged)")
    p.add_argument(
        "--attention-map",
        choices=ATTENTION_MAPS,
        default="attention",
        help="what --json, --plot and --html show: the decoder's attention (default) or a map derived from "
        "it (rollout, flow: Transformers; norm, grad, value_zeroing: any attnkit translator; torch "
        "backend). grad aligns best on the Hansards (docs/experiments/attention-maps.md)",
    )
    p.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:N, or auto (CUDA when present)")
    add_backend(p)
    add_rerank(p)
    add_engine(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..api import load_translator
    from ..engine.sharded import check_options
    from ..files import refuse_overwrite, refuse_same_outputs
    from .inputs import stdin_lines

    check_options(args)
    for flag in ("plot", "plot_heads", "html"):
        if args.engine == "ray" and getattr(args, flag):
            raise UsageError(
                f"--{flag.replace('_', '-')} shows the first results: run it without --engine ray"
            )

    for flag, value in (("--beam", args.beam), ("--batch-size", args.batch_size), ("--n-best", args.n_best)):
        if value < 1:
            raise UsageError(f"{flag} must be >= 1, got {value}")
    if args.n_best > args.beam:
        raise UsageError(f"--n-best {args.n_best} needs --beam >= {args.n_best} (got --beam {args.beam})")
    outputs = {f"--{f.replace('_', '-')}": getattr(args, f) for f in ("plot", "plot_heads", "html")}
    refuse_same_outputs(outputs)
    for flag, out in outputs.items():
        if out:
            refuse_overwrite(out, {"--model": args.model}, flag)
    lines = list(args.text) if args.text else stdin_lines()
    if not lines:
        raise UsageError("no input: give sentences as arguments or on stdin")
    rerank = rerank_option(args)
    derived = args.attention_map != "attention"
    if derived and (args.backend == "onnx" or args.int8):
        raise UsageError(f"--attention-map {args.attention_map} reads the torch model: use --backend torch")
    backend = "torch" if derived else args.backend
    translator = load_translator(
        args.model,
        int8=args.int8,
        device=args.device,
        backend=backend,
        rerank=rerank,
        channel_weight=args.channel_weight,
        length_weight=args.length_weight,
    )
    if args.plot_heads and not translator.attention_layers:  # before any work
        raise UsageError(f"--plot-heads: {translator.description} has one attention, no layers or heads")
    if derived:
        from ..explain.map_kinds import check_method, model_kind
        from ..pretrained import DEFAULTS

        name = str(args.model or DEFAULTS["translation"])
        check_method(args.attention_map, model_kind(translator), name=name)
    if args.engine == "ray":
        return _on_ray(args, translator, lines, rerank)
    results = translator.translate(lines, beam=args.beam, batch_size=args.batch_size, n_best=args.n_best)
    if derived:
        from ..explain.translator_maps import with_attention_map

        results = with_attention_map(translator, results, args.attention_map)
    for r in results:
        print(json_text(r.to_json(), ensure_ascii=False) if args.json else r.translation)
    if args.plot or args.plot_heads:
        _plot(args, translator, results)
    if args.html:
        from ..files import atomic_write_text
        from ..results import explorer_rows
        from ..visualization.explorer import static_page

        page = static_page({"view": "translate", "results": explorer_rows(translator, results)})
        atomic_write_text(args.html, page)
        log.info(f"explorer page written to {args.html}")
    return 0


def _on_ray(args: argparse.Namespace, translator: Any, lines: list[str], rerank: bool | str | None) -> int:
    """The same lines as the local run prints, computed in shards on Ray workers."""
    from ..engine.sharded import run_in_order

    keep = ("model", "int8", "device", "backend", "beam", "batch_size", "n_best", "json", "attention_map")
    options = {k: getattr(args, k) for k in keep}
    options.update(rerank=rerank, channel_weight=args.channel_weight, length_weight=args.length_weight)
    if options["attention_map"] != "attention":
        options["backend"] = "torch"
    for line in run_in_order("translate", options, lines, translator, args):
        print(line)
    return 0


def _plot(args: argparse.Namespace, translator: Any, results: list[Any]) -> None:
    from ..visualization.heatmap import plot_head_grid, plot_translation

    first = next((r for r in results if r.translation), None)
    if first is None:
        raise UsageError("--plot: nothing was translated")
    if args.plot:
        plot_translation(first, args.plot, values=args.values, words=args.words)
        log.info(f"attention plot written to {args.plot}")
    if args.plot_heads:
        maps = translator.layer_attention(first)
        if maps is None:
            raise UsageError(f"--plot-heads: {translator.description} has one attention, no layers or heads")
        plot_head_grid(first, maps, args.plot_heads)
        log.info(f"head grid written to {args.plot_heads}")
