"""``attnkit.align``: the one alignment path, with one set of defaults, used by ``attnkit align``, the
explorer's ``/api/align`` and scripts (the Python API of word alignment).

Defaults come from the shipped model's record (``pretrained.records``: its reverse model and the trial
set's choice of scores, symmetrization and link method); a model without one is aligned in one
direction from its attention with argmax links. ``align_corpus`` (``alignment.aligner``) does the work.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .errors import UsageError


@dataclass(frozen=True)
class AlignSettings:
    """What an alignment run reads: the models (as named) and how links are made."""

    model: str
    reverse: str | None
    scores: str
    method: str
    symmetrize: str
    lexical: float = 0.0  # the lexical tables' weight in each direction's word matrix (0: none)
    # (source, target) languages of the pair, for the lexical tables, where the checkpoints do not say
    # (a shipped model's record; an adapted aligner's): None = the forward model's own
    languages: tuple[str, str] | None = None
    lexical_given: bool = True  # False for a default weight: tables not installed -> a note, not an error


def align_settings(
    model: str | None = None,
    reverse_model: str | None = None,
    scores: str | None = None,
    method: str | None = None,
    symmetrize: str | None = None,
    *,
    search: bool = False,
    adapt: int = 0,
    backend: str = "auto",
    int8: bool = False,
    lexical: float | None = None,
) -> AlignSettings:
    """The settings for aligning with ``model`` (default: the shipped aligner); None means the default:
    the record's reverse model ("none": one direction), grad relevance where the shipped pair and torch
    allow it (else attention), intersect links with two directions (argmax with one), mean symmetrization,
    the record's lexical weight for its own pair (``lexical_adapted`` with --adapt; other models: none)."""
    from .pretrained import DEFAULTS, record

    name = str(model or DEFAULTS["alignment"])
    saved = saved_aligner(name)
    if saved is not None:  # an aligner written by `attnkit align --adapt N --save DIR`
        reverse = saved["reverse"] if reverse_model is None and not search else _none(reverse_model)
        if method is None:  # the saved choice for the saved pair; else as for any model
            method = saved["method"] if reverse == saved["reverse"] else "intersect" if reverse else "argmax"
        how = symmetrize or saved["symmetrize"]
        weight = saved["lexical"] if lexical is None else lexical
        return AlignSettings(
            saved["model"], reverse, scores or saved["scores"], method, how, weight, saved["languages"]
        )  # (the saved weight counts as given: the aligner was measured with its tables)
    found = record(name)
    shipped_reverse = found.align.reverse if found and found.align else None
    if reverse_model is None and not search:
        reverse_model = shipped_reverse
    elif reverse_model == "none" or search:
        reverse_model = None
    if method is None:
        method = "intersect" if reverse_model else "argmax"
    pair = reverse_model is not None and reverse_model == shipped_reverse
    if scores is None:
        scores = found.align.scores if pair and found and found.align else "attention"
        if scores != "attention" and (adapt or backend == "onnx" or int8 or not has_torch()):
            scores = "attention"  # --adapt's gain was measured on attention; onnx reads attention only
    given = lexical is not None
    if lexical is None:  # the trial set's choice for a shipped pair, as it ships or after --adapt
        chosen = found.align if pair and found else None
        lexical = (chosen.lexical_adapted if adapt else chosen.lexical) if chosen else 0.0
    languages = found.languages if found else None
    how = symmetrize or "mean"
    return AlignSettings(name, reverse_model, scores, method, how, float(lexical), languages, given)


SAVED = "aligner.json"


def _none(reverse: str | None) -> str | None:
    return None if reverse == "none" else reverse


def _choices() -> dict[str, tuple[str, ...]]:
    from .names import ALIGNMENT_METHODS, ALIGNMENT_SCORES, SYMMETRIZATIONS

    return {"scores": ALIGNMENT_SCORES, "method": ALIGNMENT_METHODS, "symmetrize": SYMMETRIZATIONS}


def saved_aligner(path: str) -> dict[str, Any] | None:
    """A saved aligner's settings, model paths resolved (None when ``path`` is not such a folder); a
    broken ``aligner.json`` is one line naming it."""
    import json
    from pathlib import Path

    folder = Path(path)
    where = folder / SAVED
    if not where.is_file():
        return None
    if where.stat().st_size > 1 << 20:
        raise UsageError(f"{where}: {where.stat().st_size} bytes; an aligner's settings are a few hundred")
    fields = ("model", "reverse", "scores", "method", "symmetrize")
    try:
        data = json.loads(where.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise UsageError(f"{where}: not UTF-8 text (an aligner's settings, written by --save)") from None
    except json.JSONDecodeError as e:
        raise UsageError(f"{where}:{e.lineno}: not valid JSON ({e.msg})") from None
    except RecursionError:
        raise UsageError(f"{where}: nested too deeply to be an aligner's settings") from None
    if not isinstance(data, dict):
        raise UsageError(f"{where}: expected an object with {', '.join(fields)}; got {type(data).__name__}")
    missing = [k for k in fields if k not in data]
    if missing:
        raise UsageError(
            f"{where}: missing field {missing[0]!r} (an aligner's settings: {', '.join(fields)})"
        )
    found = {k: data[k] for k in fields}
    found.update(_lexical_fields(where, data))
    for key, valid in _choices().items():
        if found[key] not in valid:
            shown = json.dumps(found[key])[:40]
            raise UsageError(f"{where}: field {key!r}: {shown} is not one of {', '.join(valid)}")
    for key in ("model", "reverse"):
        value = found[key]
        if value is None and key == "reverse":
            continue
        inside = (
            isinstance(value, str)
            and value
            and not Path(value).is_absolute()
            and ".." not in Path(value).parts
        )
        if not inside or not (folder / value).is_file():
            raise UsageError(
                f"{where}: field {key!r}: expected the name of a checkpoint file in {folder}"
                f"{' (or null)' if key == 'reverse' else ''}, got {json.dumps(value)[:60]}"
            )
        found[key] = str(folder / value)
    return found


def _lexical_fields(where: Any, data: dict[str, Any]) -> dict[str, Any]:
    """A saved aligner's ``lexical`` weight and pair ``languages`` (written since the lexical tables;
    absent: no tables, the models' own languages), checked."""
    import json

    weight, languages = data.get("lexical", 0.0), data.get("languages")
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 <= weight <= 1:
        raise UsageError(
            f"{where}: field 'lexical': expected a number in [0, 1], got {json.dumps(weight)[:40]}"
        )
    pair = isinstance(languages, list) and len(languages) == 2 and all(isinstance(x, str) for x in languages)
    if languages is not None and not pair:
        shown = json.dumps(languages)[:40]
        raise UsageError(f"{where}: field 'languages': expected [source, target], got {shown}")
    return {"lexical": float(weight), "languages": tuple(languages) if languages else None}


def save_aligner(folder: str, forward: str, reverse: str | None, settings: AlignSettings, steps: int) -> None:
    """``attnkit align --adapt N --save DIR``: the adapted checkpoints (weights only, float32: the
    links are the run's own) and ``aligner.json``, so ``--model DIR`` aligns the same way later."""
    from pathlib import Path

    from .files import atomic_write_json
    from .training.adapt import save_weights

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    save_weights(forward, out / "forward.pt")
    if reverse is not None:
        save_weights(reverse, out / "reverse.pt")
    record: dict[str, Any] = {"model": "forward.pt", "reverse": "reverse.pt" if reverse else None}
    record.update(scores=settings.scores, method=settings.method, symmetrize=settings.symmetrize)
    record.update(
        lexical=settings.lexical, languages=list(settings.languages) if settings.languages else None
    )
    record.update(adapted_from=[settings.model, settings.reverse], adapt_steps=steps)
    atomic_write_json(out / SAVED, record)


def has_torch() -> bool:
    import importlib.util

    return importlib.util.find_spec("torch") is not None


def align(
    sources: Sequence[str],
    targets: Sequence[str],
    model: str | None = None,
    reverse_model: str | None = None,
    *,
    scores: str | None = None,
    method: str | None = None,
    symmetrize: str | None = None,
    gold: Any = None,
    backend: str = "auto",
    device: str = "cpu",
    int8: bool = False,
    lexical: float | None = None,
    **options: Any,
) -> Any:
    """Word links of sentence pairs (whitespace-separated words) -> ``AlignmentReport`` (``.pharaoh()``,
    ``.rows()``, ``.summary()`` with AER against ``gold``: (sure, possible) 0-based links). ``model``,
    ``reverse_model``: shipped names or paths (defaults: ``align_settings``); ``lexical``: the lexical
    tables' weight in [0, 1] (``alignment.lexical``; None: the model's default). ``options``: layer, heads,
    shift, threshold (``alignment.aligner.align_corpus``)."""
    settings = align_settings(
        model, reverse_model, scores, method, symmetrize, backend=backend, int8=int8, lexical=lexical
    )
    forward, reverse = load_aligners(settings, backend, device, int8)
    return run(settings, forward, reverse, sources, targets, gold, **options)


def load_aligners(
    settings: AlignSettings, backend: str = "auto", device: str = "cpu", int8: bool = False
) -> tuple[Any, Any]:
    """The forward and reverse (or None) translators the settings read (torch where the scores need it).
    ``int8``: the models' int8 ONNX graphs (attention scores only); a reverse model without int8 graphs
    runs its fp32 ones, as a reranker's channel model does."""
    from .api import has_int8_graphs, load_translator

    if int8 and settings.scores != "attention":
        raise UsageError(
            f"--int8 runs ONNX int8 graphs, which give attention only; --scores {settings.scores} reads the "
            "torch model: use --scores attention with --int8, or drop --int8"
        )
    on = "torch" if settings.scores != "attention" else backend
    forward = load_translator(settings.model, device=device, backend=on, rerank=False, int8=int8)
    reverse = None
    if settings.reverse:
        own = int8 and has_int8_graphs(settings.reverse)
        reverse = load_translator(settings.reverse, device=device, backend=on, rerank=False, int8=own)
    return forward, reverse


def run(
    settings: AlignSettings,
    forward: Any,
    reverse: Any,
    sources: Sequence[str],
    targets: Sequence[str],
    gold: Any = None,
    **options: Any,
) -> Any:
    """``align`` on translators already loaded (the explorer keeps them between requests)."""
    from .alignment.aligner import align_corpus
    from .alignment.lexical import prior_for
    from .api import language_pair

    if len(sources) != len(targets):
        raise UsageError(f"{len(sources)} sources but {len(targets)} targets")
    languages = tuple(settings.languages) if settings.languages else language_pair(forward)
    if "lexical" not in options:
        options["lexical"] = prior_for(languages, settings.lexical, settings.model, settings.lexical_given)  # type: ignore[arg-type]
    return align_corpus(
        forward,
        sources,
        targets,
        reverse=reverse,
        scores=settings.scores,
        method=settings.method,
        how=settings.symmetrize,
        gold=gold,
        **options,
    )
