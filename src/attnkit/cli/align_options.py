"""The options of ``attnkit align`` (argparse only: importing this stays instant)."""

from __future__ import annotations

import argparse

from .options import add_backend, add_engine


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ..names import ALIGNMENT_METHODS as METHODS
    from ..names import ALIGNMENT_SCORES as SCORES
    from ..names import SYMMETRIZATIONS as SYMMETRIZE

    p.add_argument("--model", default=None, help="checkpoint or shipped model name (default: shipped)")
    p.add_argument("--src", required=True, help="source sentences, whitespace-tokenized words")
    p.add_argument("--tgt", required=True, help="target sentences, line-aligned with --src")
    p.add_argument("--gold", help="gold links, NAACL format 'SENT SRC TGT S|P' (1-based): print AER")
    p.add_argument(
        "--method",
        choices=METHODS,
        default=None,
        help="how links are read off the attention (default: intersect with two directions, argmax with "
        "one: the choices of the Hansards trial set)",
    )
    p.add_argument("--threshold", type=float, default=0.3, help="for --method threshold")
    p.add_argument(
        "--null-threshold",
        type=float,
        default=0.0,
        metavar="P",
        help="drop links whose alignment probability (the matrix --probabilities writes) is below P: "
        "their words align to nothing (default 0: keep every link the method makes)",
    )
    p.add_argument(
        "--lexical",
        type=float,
        metavar="W",
        help="weight in [0, 1] of the word-translation tables (trained on the shipped data of the model's "
        "languages by an HMM aligner) mixed into each direction's word matrix; 0: none. Default, for a "
        "shipped pair: 0.6, 0.5 with --adapt (the Hansards trial set's choices; test AER 0.212 -> 0.096, "
        "--adapt 800 0.108 -> 0.076); other models: 0",
    )
    p.add_argument("--layer", type=int, help="Transformer: decoder layer whose cross-attention is used")
    p.add_argument("--heads", help="Transformer: comma-separated head indices to average (default all)")
    p.add_argument(
        "--shift",
        type=int,
        default=0,
        choices=[0, 1],
        help="1: align target word t with the attention of the step that reads it (t + 1)",
    )
    p.add_argument(
        "--search",
        action="store_true",
        help="with --gold: print AER for every layer and head (use on a dev/trial set only)",
    )
    p.add_argument(
        "--scores",
        choices=SCORES,
        default=None,
        help="what links are read from: the model's attention, a map derived from it (grad: Chefer et "
        "al.'s gradient-weighted relevance; rollout, flow, norm, value_zeroing), or the gradient saliency "
        "of each target token (all but attention read the torch model). Default: grad for a shipped "
        "model with a shipped reverse (Hansards test AER, with the lexical tables, 0.104 -> 0.096), else "
        "attention",
    )
    p.add_argument(
        "--reverse-model",
        help="a target->source model: align both directions and --symmetrize them. Default: the shipped "
        "reverse of a shipped --model (enfr-rnn <-> fren-rnn, enfr-transformer -> fren-rnn, ende-transformer "
        "<-> deen-rnn; with --scores grad, Hansards test AER 0.301 -> 0.212 for enfr-rnn); 'none': one "
        "direction",
    )
    p.add_argument(
        "--symmetrize",
        choices=SYMMETRIZE,
        default="mean",
        help="how the two directions combine (default mean: chosen on the Hansards trial set)",
    )
    p.add_argument(
        "--adapt",
        type=int,
        default=0,
        metavar="STEPS",
        help="first fine-tune the model (and --reverse-model) on these sentence pairs for STEPS updates, "
        "as statistical aligners train on what they align; no gold links are read. 800 (chosen on the "
        "Hansards trial set among 200-800) takes Hansards test AER 0.343 -> 0.108 in about 14 minutes on 2 "
        "cores for its 484 pairs (200: 0.128, 3.5 minutes). "
        "0 = off (default)",
    )
    p.add_argument("--adapt-lr", type=float, default=3e-4, help="learning rate of --adapt (constant)")
    p.add_argument(
        "--guided",
        type=int,
        default=0,
        metavar="STEPS",
        help="with --adapt and a reverse model: then train each direction's attention toward the links "
        "both directions agree on (guided alignment, self-taught: no gold read) for STEPS updates",
    )
    p.add_argument(
        "--guided-weight", type=float, default=1.0, help="weight of the guided loss beside translation's"
    )
    p.add_argument(
        "--save",
        metavar="DIR",
        help="with --adapt: keep the adapted aligner in this new folder; later `--model DIR` aligns with "
        "it (its reverse model and settings included) without fine-tuning again",
    )
    p.add_argument("--json", action="store_true", help="print the AER report (with --gold) as JSON")
    p.add_argument(
        "--format",
        choices=("pharaoh", "naacl", "json", "blocks"),
        default="pharaoh",
        help="links without --gold: pharaoh (0-based 'src-tgt' per pair, default), naacl ('SENT SRC TGT S', "
        "1-based), json (one object per pair: words, links and blocks), blocks (the smallest phrase pairs "
        "the links allow, 's0-s1:t0-t1' per pair, 0-based inclusive)",
    )
    p.add_argument(
        "--plot",
        metavar="FILE",
        help="the first pair's alignment probabilities as a heatmap, its links outlined (PNG, SVG or PDF)",
    )
    p.add_argument(
        "--probabilities",
        action="store_true",
        help="with --format json: each pair's alignment probabilities, target words x source words (the "
        "matrix the links are read from; with a reverse model both directions' mean)",
    )
    p.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:N, or auto (CUDA when present)")
    add_backend(p)
    p.add_argument(
        "--int8",
        action="store_true",
        help="the models' int8 ONNX graphs (an export made with --int8-only has no others); attention "
        "scores only; a reverse model without int8 graphs runs its fp32 ones",
    )
    add_engine(p)
