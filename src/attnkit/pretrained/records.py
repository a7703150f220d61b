"""One record per shipped model: what it does, which languages, what it is the default of, and the models
and settings it is used with (torch-free). The CLI, the server and the Python API read these records and
nothing else: no second table of pairs, channels or defaults anywhere.

Where the numbers come from (docs/experiments/defaults.md, docs/experiments/alignment.md):
- channel weights were chosen on the dev split (scripts/rerank_weights.py): dev BLEU enfr-rnn 47.62 ->
  48.22, enfr-transformer (int8) 50.40 -> 50.73, ende-transformer (int8) 42.36 -> 42.76;
- alignment settings were chosen on the Hansards trial set (scripts/align_defaults.py): grad relevance,
  both directions averaged (mean), links where both directions agree (intersect): test AER enfr-rnn 0.343
  -> 0.212, enfr-transformer with fren-rnn 0.565 -> 0.237; then the lexical tables mixed in at 0.6
  (``alignment.lexical``, 0.5 after --adapt): enfr-rnn 0.212 -> 0.096 (--adapt 800: 0.108 -> 0.076).
  English-German has no gold alignments here: its pair takes the English-French choice untested.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError


@dataclass(frozen=True)
class Channel:
    """Noisy-channel reranking (``rerank.NoisyChannel``): the target -> source model and the weights."""

    model: str
    channel_weight: float
    length_weight: float


@dataclass(frozen=True)
class AlignDefaults:
    """How ``attnkit.align`` aligns with this model by default (the trial set's choice)."""

    reverse: str | None  # the target -> source model aligned the other way (None: one direction)
    scores: str = "grad"
    symmetrize: str = "mean"
    method: str = "intersect"
    lexical: float = 0.6  # the lexical tables' weight (alignment.lexical; the trial set's choice)
    lexical_adapted: float = 0.5  # with --adapt (the trial set's choice for the adapted pair)


@dataclass(frozen=True)
class Record:
    """A shipped model. ``defaults``: the tasks it is the default model of (``attnkit.load()``, the CLI)."""

    name: str
    task: str
    languages: tuple[str, str] | None = None  # (source, target) of a translator
    defaults: tuple[str, ...] = ()
    channel: Channel | None = None
    align: AlignDefaults | None = None


RECORDS: dict[str, Record] = {
    r.name: r
    for r in (
        Record(
            "enfr-transformer",
            "translation",
            ("en", "fr"),
            defaults=("translation",),
            channel=Channel("fren-rnn", 0.2, 0.0),
            align=AlignDefaults("fren-rnn"),
        ),
        Record(
            "enfr-rnn",
            "translation",
            ("en", "fr"),
            defaults=("alignment",),
            channel=Channel("fren-rnn", 0.1, 0.25),
            align=AlignDefaults("fren-rnn"),
        ),
        Record("fren-rnn", "translation", ("fr", "en"), align=AlignDefaults("enfr-rnn")),
        Record(
            "ende-transformer",
            "translation",
            ("en", "de"),
            channel=Channel("deen-rnn", 0.4, 0.25),
            align=AlignDefaults("deen-rnn"),
        ),
        Record("deen-rnn", "translation", ("de", "en"), align=AlignDefaults("ende-transformer")),
        Record("reviews-han", "classification", defaults=("classification",)),
        Record("digits-captioner", "captioning", defaults=("captioning",)),
        # a Llama-architecture causal LM in Hugging Face format (scripts/train_causal_lm.py): attnkit inspect
        Record("enfr-llama", "generation", defaults=("generation",)),
    )
}

# the default model of each task (and of alignment), read off the records
DEFAULTS: dict[str, str] = {task: r.name for r in RECORDS.values() for task in r.defaults}


def record(name: str | None) -> Record | None:
    """The record of a shipped model's name; None for anything else (a path, a Hugging Face folder)."""
    return RECORDS.get(str(name)) if name is not None else None


def channel_of(name: str) -> Channel:
    """The shipped channel model and weights of the shipped translator ``name``; a UsageError naming the
    models that have one."""
    found = record(name)
    if found is None or found.channel is None:
        have = ", ".join(sorted(n for n, r in RECORDS.items() if r.channel))
        raise UsageError(
            f"--rerank: {name} has no shipped channel model (shipped pairs: {have}); give --channel-model"
        )
    return found.channel


def check_records() -> None:
    """Each record's partners are shipped translators of the mirrored direction (a test calls this)."""
    for r in RECORDS.values():
        for partner in [r.channel.model if r.channel else None, r.align.reverse if r.align else None]:
            if partner is None:
                continue
            other = RECORDS[partner]
            assert r.languages and other.languages == r.languages[::-1], (r.name, partner)
    assert sorted(DEFAULTS) == ["alignment", "captioning", "classification", "generation", "translation"]
