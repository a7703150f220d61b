"""``attnkit align --model M --src F --tgt F [--gold F]``: word alignments from attention."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import UsageError
from ..files import json_text


def add_parser(sub: Any, name: str) -> None:
    from .align_options import add_arguments

    p = sub.add_parser(name, help="word alignments from attention under forced decoding (Pharaoh i-j)")
    add_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..data.parallel import read_lines
    from ..engine.sharded import check_options

    check_options(args)
    if args.engine == "ray" and (args.adapt or args.search):
        flag = "--adapt" if args.adapt else "--search"
        raise UsageError(f"{flag} reads the whole input in one process: run it without --engine ray")

    if args.gold and (args.format != "pharaoh" or args.probabilities):
        given = "--probabilities" if args.probabilities else f"--format {args.format}"
        raise UsageError(
            f"--gold prints the AER report (--json: as JSON); {given} writes links: run it without --gold"
        )
    sources, targets = read_lines(args.src), read_lines(args.tgt)
    if len(sources) != len(targets):
        raise UsageError(f"{args.src} has {len(sources)} lines but {args.tgt} has {len(targets)}")
    if not sources:
        raise UsageError(f"{args.src} has no sentences to align")
    if args.adapt < 0:
        raise UsageError(f"--adapt: expected a number of steps >= 0, got {args.adapt}")
    if not 0 <= args.null_threshold <= 1:
        raise UsageError(f"--null-threshold: expected a probability in [0, 1], got {args.null_threshold}")
    if args.lexical is not None and not 0 <= args.lexical <= 1:
        raise UsageError(f"--lexical: expected a weight in [0, 1], got {args.lexical}")
    if args.lexical is not None and args.search:
        raise UsageError("--search chooses a layer and heads from attention alone: run it without --lexical")
    args.lexical_given = args.lexical is not None
    if args.probabilities and args.format != "json":
        raise UsageError("--probabilities: the matrices are written with --format json")
    if args.plot is not None:
        from ..files import refuse_overwrite
        from ..visualization.heatmap import check_path

        check_path(args.plot)
        refuse_overwrite(args.plot, {"--src": args.src, "--tgt": args.tgt, "--gold": args.gold}, "--plot")
    if args.save is not None:
        _check_save(args)
    if args.guided < 0 or not 0 <= args.guided_weight < float("inf"):
        raise UsageError("--guided and --guided-weight must be >= 0 (and finite)")
    if args.adapt and not 0 < args.adapt_lr < float("inf"):
        raise UsageError(f"--adapt-lr: expected a learning rate > 0, got {args.adapt_lr}")
    if args.adapt:
        for path, lines in ((args.src, sources), (args.tgt, targets)):
            empty = next((n for n, line in enumerate(lines, 1) if not line.strip()), None)
            if empty is not None:
                raise UsageError(f"{path}:{empty}: empty line; --adapt fine-tunes on every pair: remove it")
    if args.guided and not args.adapt:
        raise UsageError("--guided trains an adapted pair: it goes with --adapt STEPS")
    args.gold_links = _gold(args.gold, sources, targets) if args.gold else None  # checked before any work
    _choose_defaults(args)
    _check_torch_needs(args)
    if not args.adapt:
        return _align(args, sources, targets)
    if args.guided and not args.reverse_model:
        raise UsageError("--guided teaches each direction what both agree on: it needs a reverse model")
    if args.reverse_model:  # before minutes of fine-tuning
        forward, backward = (_load(args, m, reverse=i == 1) for i, m in enumerate(_names(args)))
        check_aligners(args, forward, backward)
    import tempfile

    from ..training.adapt import adapt_translator

    args.reverse_name = args.reverse_model  # the report names the models given, not the temporary copies
    args.model_name = args.model
    with tempfile.TemporaryDirectory(prefix="attnkit-adapt-") as tmp:
        args.model = str(
            adapt_translator(
                args.model, sources, targets, args.adapt, f"{tmp}/fwd", args.adapt_lr, args.device
            )
        )
        if args.reverse_model:
            args.reverse_model = str(
                adapt_translator(
                    args.reverse_model, targets, sources, args.adapt, f"{tmp}/rev", args.adapt_lr, args.device
                )
            )
        if args.guided:
            from ..align_training import guide_pair

            pair = (args.model, args.reverse_model, sources, targets, args.guided, tmp, args.guided_weight)
            args.model, args.reverse_model = guide_pair(*pair, device=args.device)
        if args.save is not None:
            from ..aligning import AlignSettings, save_aligner
            from ..log import log

            names = (_names(args)[0], args.reverse_name, args.scores, args.method, args.symmetrize)
            named = AlignSettings(*names, args.lexical, args.languages, args.lexical_given)
            save_aligner(args.save, args.model, args.reverse_model, named, args.adapt)
            log.info(f"adapted aligner saved to {args.save} (align with it: --model {args.save})")
        return _align(args, sources, targets)


def _check_save(args: argparse.Namespace) -> None:
    """--save DIR: only after --adapt, into a new (or empty) folder."""
    from pathlib import Path

    if not args.adapt:
        raise UsageError("--save keeps an adapted aligner: it goes with --adapt STEPS")
    folder = Path(args.save)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UsageError(f"--save {args.save} already exists: give a new folder (nothing is overwritten)")


def _choose_defaults(args: argparse.Namespace) -> None:
    """--model, --reverse-model, --scores, --method, --symmetrize: ``attnkit.align``'s defaults (the
    shipped record's pair and the trial set's choices); one line on stderr when a model without a shipped
    reverse is aligned in one direction, or when torch is missing for the default grad scores."""
    from ..aligning import align_settings, has_torch
    from ..log import log

    given = (args.reverse_model, args.scores)
    settings = align_settings(
        args.model,
        args.reverse_model,
        args.scores,
        args.method,
        args.symmetrize,
        search=args.search,
        adapt=args.adapt,
        backend=args.backend,
        int8=args.int8,
        lexical=args.lexical,
    )
    args.notes = []  # said once the model loaded: a model that cannot load is its error's one line
    if given[0] is None and settings.reverse is None and not args.search:
        args.notes.append(
            f"align: {settings.model} has no shipped reverse model; one direction (--reverse-model adds one)"
        )
    if given[1] is None and settings.scores == "attention" and settings.reverse and not has_torch():
        log.info(
            "align: torch is not installed, so links come from attention (AER 0.104, not 0.096 with grad)"
        )
    args.model, args.reverse_model, args.scores = settings.model, settings.reverse, settings.scores
    args.method, args.symmetrize, args.lexical = settings.method, settings.symmetrize, settings.lexical
    args.languages = settings.languages
    if args.lexical and args.adapt and not args.languages:  # checked before fine-tuning, not after
        from ..alignment.lexical import prior_for
        from ..api import language_pair

        args.languages = language_pair(_load(args, args.model))
        prior_for(args.languages, args.lexical, args.model, args.lexical_given)


def _align(args: argparse.Namespace, sources: list[str], targets: list[str]) -> int:
    from ..aligning import AlignSettings, run

    translator = _load(args, args.model)
    if args.lexical:  # a model whose languages have no tables: that line alone, before any note
        from ..alignment.lexical import prior_for
        from ..api import language_pair

        languages = args.languages or language_pair(translator)
        if prior_for(languages, args.lexical, args.model, args.lexical_given) is None:
            args.lexical = 0.0  # tables not installed (said): the report says so
    for note in getattr(args, "notes", []):
        from ..log import log

        log.info(note)
    heads = [int(h) for h in args.heads.split(",")] if args.heads else None
    reverse = None
    if args.reverse_model and not args.search:
        reverse = _load(args, args.reverse_model, reverse=True)
    if not args.adapt:  # adapted copies were checked before their fine-tuning
        check_aligners(args, translator, reverse)
    if args.search:
        return _search(args, translator, sources, targets)
    settings = AlignSettings(
        args.model,
        args.reverse_model,
        args.scores,
        args.method,
        args.symmetrize,
        args.lexical,
        args.languages,
    )
    options = {k: v for k, v in _settings(args).items() if k not in ("scores", "method", "how", "gold")}
    if args.engine == "ray":
        del translator, reverse  # checked here; each worker loads its own
        report = _on_ray(args, settings, sources, targets, {**options, "heads": heads})
    else:
        report = run(settings, translator, reverse, sources, targets, args.gold_links, heads=heads, **options)
    return _output(args, report)


def _on_ray(
    args: argparse.Namespace, settings: Any, sources: list[str], targets: list[str], options: dict[str, Any]
) -> Any:
    """The report the local run makes, its links (and probabilities) computed in shards on Ray."""
    from dataclasses import asdict

    import numpy as np

    from ..alignment.aligner import AlignmentReport, report_settings
    from ..alignment.links import SORT_WINDOW
    from ..engine.sharded import run_sharded

    # whole windows of length-sorted batches (``links.length_order``): the same batches, the same floats
    args.shard_size = -(-args.shard_size // SORT_WINDOW) * SORT_WINDOW
    job = {**options, "settings": asdict(settings), "backend": _backend(args), "device": args.device}
    job["int8"] = args.int8
    job["probabilities"] = bool(args.probabilities or args.plot)
    outputs = run_sharded("align", job, [[s, t] for s, t in zip(sources, targets)], args)
    links = [{(int(s), int(t)) for s, t in out["links"]} for out in outputs]
    soft = None
    if job["probabilities"]:
        soft = [np.asarray(out["probabilities"], dtype=np.float64) for out in outputs]
    how = args.symmetrize if args.reverse_model else None
    shown = report_settings(
        args.method, args.scores, how, args.shift, args.layer, options["heads"], settings.lexical
    )
    return AlignmentReport(sources, targets, links, args.gold_links, shown, soft)


def _output(args: argparse.Namespace, report: Any) -> int:
    """What ``attnkit align`` writes of a report: the plot, the links or the AER summary."""
    if args.plot is not None and report.probabilities:
        from ..log import log
        from ..visualization.heatmap import save_figure
        from ..visualization.pictures import probabilities_figure

        save_figure(probabilities_figure(report.rows()[0], report.probabilities[0]), args.plot)
        log.info(f"alignment probabilities of the first pair drawn to {args.plot}")
    if args.gold is None:
        if args.format == "json":
            rows = report.json_rows(args.probabilities)
            print("\n".join(json_text(row, ensure_ascii=False) for row in rows))
        else:
            lines = {"naacl": report.naacl, "blocks": report.blocks}.get(args.format, report.pharaoh)()
            print("\n".join(lines))
        return 0
    _print(args, report.summary())
    return 0


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    """align_corpus's options as the command line gives them (heads and the models aside)."""
    return {
        "scores": args.scores,
        "method": args.method,
        "threshold": args.threshold,
        "how": args.symmetrize,
        "layer": args.layer,
        "shift": args.shift,
        "null_threshold": args.null_threshold,
        "gold": args.gold_links,
    }


def _print(args: argparse.Namespace, summary: dict[str, Any]) -> None:
    """The AER report in the command's own key order, with the models as the user named them."""
    summary["reverse_model"] = getattr(args, "reverse_name", args.reverse_model)
    summary["adapt"] = args.adapt
    keys = ("aer", "precision", "recall", "n_sentences", "method", "scores", "reverse_model", "symmetrize")
    summary["null_threshold"] = args.null_threshold
    report = {k: summary[k] for k in (*keys, "shift", "adapt", "layer", "heads", "lexical", "null_threshold")}
    print(json_text(report) if args.json else "  ".join(f"{k}={v}" for k, v in report.items()))


def _check_torch_needs(args: argparse.Namespace) -> None:
    """--int8, or an ONNX export given as a model, with an option that reads the torch checkpoint
    (--scores other than attention, --adapt): one line naming both, before any work."""
    from pathlib import Path

    needs = f"--scores {args.scores} reads" if args.scores != "attention" else "--adapt fine-tunes"
    if args.scores == "attention" and not args.adapt:
        return
    if args.int8:
        raise UsageError(
            f"--int8 runs ONNX int8 graphs, which give attention only; {needs} the torch model: "
            "use --scores attention without --adapt, or drop --int8"
        )
    for name in (args.model, args.reverse_model):
        if name and (Path(name) / "manifest.json").is_file():
            raise UsageError(
                f"{needs} the torch checkpoint, and {name} is an ONNX export (no checkpoint): use --scores "
                "attention without --adapt, or the checkpoint it was exported from"
            )


def _load(args: argparse.Namespace, name: str, reverse: bool = False) -> Any:
    """A model ``attnkit align`` reads, on its backend; with --int8 its int8 graphs (a reverse model
    without any: its fp32 ones)."""
    from ..api import has_int8_graphs, load_translator

    int8 = bool(args.int8) and (not reverse or has_int8_graphs(name))
    return load_translator(name, device=args.device, backend=_backend(args), rerank=False, int8=int8)


def _backend(args: argparse.Namespace) -> str:
    """Scores other than the attention itself read the torch model (gradients, value vectors)."""
    if args.scores != "attention":
        if args.backend == "onnx":
            raise UsageError(
                f"--scores {args.scores} needs gradients or value vectors of the torch model: "
                "use --backend torch (or auto)"
            )
        return "torch"
    return str(args.backend)


def _names(args: argparse.Namespace) -> tuple[str, str]:
    """The models as the user named them (before --adapt's temporary copies), for messages."""
    forward = str(getattr(args, "model_name", None) or args.model)
    return forward, str(getattr(args, "reverse_name", None) or args.reverse_model)


def check_aligners(args: argparse.Namespace, forward: Any, reverse: Any) -> None:
    """Each model is a translator that gives --scores (one line naming the model and its role), and the
    reverse model translates the other way (target -> source) when both directions are known."""
    from ..api import check_channel, describe
    from ..explain.map_kinds import check_method
    from ..names import ATTENTION_MAPS

    names = _names(args)
    for model, name in ((forward, names[0]), (reverse, f"{names[1]} (the reverse model)")):
        if model is None:
            continue
        if not hasattr(model, "forced_attention"):
            raise UsageError(
                f"align reads a translator's attention under forced decoding; {name} is {describe(model)}: "
                "give an encoder-decoder translator"
            )
        if args.scores in ATTENTION_MAPS:
            layer = args.layer if model is forward else None
            check_method(args.scores, model.kind, layer if model.attention_layers else None, name=name)
    if reverse is not None:
        check_channel(forward, reverse, names[0], f"--reverse-model {names[1]}", "reverse model")


def _gold(gold: str, sources: list[str], targets: list[str]) -> Any:
    """(sure, possible) gold links, checked against the sentences' word counts."""
    from ..alignment.links import read_naacl

    lengths = [(len(s.split()), len(t.split())) for s, t in zip(sources, targets)]
    return read_naacl(gold, len(sources), lengths)


def _search(args: argparse.Namespace, translator: Any, sources: list[str], targets: list[str]) -> int:
    """AER for every decoder layer and head of a Transformer (a reverse model, if any, read once)."""
    from ..alignment.aligner import Matrices, align_corpus, corpus_matrices

    if args.gold is None:
        raise UsageError("--search needs --gold")
    n_layers = translator.attention_layers
    if not n_layers:
        raise UsageError("--search applies to Transformer models only")
    from ..explain.map_kinds import LAYERED

    if args.scores in LAYERED or args.scores == "saliency":
        raise UsageError(
            f"--search tries each layer and head, but --scores {args.scores} reads every layer at once: "
            "use --scores attention, norm or value_zeroing"
        )
    backward = None
    if args.reverse_model:
        reverse = _load(args, args.reverse_model, reverse=True)
        backward = corpus_matrices(reverse, targets, sources, scores=args.scores, shift=args.shift).forward
    rows = []
    for layer in range(n_layers):
        for heads in [None] + [[h] for h in range(translator.attention_heads)]:
            settings = {**_settings(args), "layer": layer}
            one = corpus_matrices(translator, sources, targets, None, args.scores, layer, heads, args.shift)
            both = Matrices(one.forward, backward)
            report = align_corpus(translator, sources, targets, heads=heads, matrices=both, **settings)
            rows.append({"layer": layer, "heads": heads or "all", "aer": report.summary()["aer"]})
            print(json_text(rows[-1]))
    best = min(rows, key=lambda r: r["aer"])
    print(f"best: layer {best['layer']}, heads {best['heads']}, AER {best['aer']}")
    return 0
