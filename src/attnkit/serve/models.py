"""The models a server was started with, loaded once, chosen by name in requests (never by path)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..aligning import run
from ..alignment.links import Links, parse_naacl
from ..api import load_captioner, load_classifier, load_translator
from ..data.documents import MAX_SENTENCES, MAX_WORDS
from ..errors import DataError, UnknownNameError, UsageError, shorten
from ..explain.map_kinds import applies, model_kind
from ..names import ATTENTION_MAPS
from ..pretrained import shipped
from ..results import Classification, apply_prior


@dataclass
class Loaded:
    name: str
    model: Any
    backend: str


def _name(spec: str) -> str:
    """A display name for ``--translator``/``--classifier`` values: shipped names as they are, paths by
    their folder or file stem (the path itself is never shown to clients)."""
    path = Path(spec)
    if len(path.parts) == 1 and not path.suffix:
        return spec
    return (
        path.parent.name if path.name in ("model.pt", "best.pt", "manifest.json") else path.stem or path.name
    )


def _backend(model: Any) -> str:
    """ "onnx", "onnx int8" (an export's int8 graphs), "hugging face" or "torch"."""
    if model.backend == "hf":
        return "hugging face"
    if model.backend == "torch":
        return "torch"
    return "onnx int8" if getattr(model, "variant", "") == "int8" else "onnx"


def _unique_names(specs: list[str], option: str) -> None:
    """Two models shown under one name would replace each other: one line naming both."""
    seen: dict[str, str] = {}
    for spec in specs:
        if _name(spec) in seen:
            raise UsageError(
                f"{option}: {seen[_name(spec)]} and {spec} would both be served as {_name(spec)!r}; "
                "give each model a folder of its own name"
            )
        seen[_name(spec)] = spec


class ModelSet:
    """Translators and classifiers by name; the first of each kind is the default."""

    def __init__(
        self,
        translators: list[str],
        classifiers: list[str],
        backend: str = "auto",
        int8: bool = False,
        captioners: list[str] | None = None,
        rerank: bool | None = None,
        lms: list[str] | None = None,
    ) -> None:
        """``int8``: the translators' int8 weights (the shipped Transformers' exports are int8 only);
        ``rerank``: noisy-channel reranking for the translators that ship a channel model (None: as each
        shipped model's record says; False: none)."""
        from ..pretrained import record

        self.translators: dict[str, Loaded] = {}
        self.classifiers: dict[str, Loaded] = {}
        self.specs: dict[str, str] = {}  # translator name -> what it was loaded from (its torch twin)
        self.twins: dict[str, Any] = {}
        self.backend = backend
        self.aligned: dict[str, tuple[Any, Any, Any]] = {}  # translator name -> ``aligners``
        self.captioners: dict[str, Loaded] = {}
        self.lms: dict[str, Loaded] = {}
        _unique_names(lms or [], "--lm")
        for spec in lms or []:  # decoder-only LMs for the long-context view (attnkit.inspect)
            from ..inspecting import load_lm

            self.lms[_name(spec)] = Loaded(_name(spec), load_lm(spec), "hugging face")
        _unique_names(translators, "--translator")
        _unique_names(classifiers, "--classifier")
        _unique_names(captioners or [], "--captioner")
        for spec in captioners or []:
            model = load_captioner(spec, backend=backend)
            self.captioners[_name(spec)] = Loaded(_name(spec), model, _backend(model))
        for spec in translators:
            found = record(spec)
            has_channel = found is not None and found.channel is not None
            model = load_translator(
                spec, backend=backend, int8=int8, rerank=has_channel and rerank is not False
            )
            self.translators[_name(spec)] = Loaded(_name(spec), model, _backend(model))
            self.specs[_name(spec)] = spec
        for spec in classifiers:
            model = load_classifier(spec, backend=backend)
            self.classifiers[_name(spec)] = Loaded(_name(spec), model, _backend(model))

    def torch_twin(self, name: str) -> Any:
        """The translator ``name`` on a backend that attention-map methods read (torch or Hugging Face):
        itself when it is one, else its checkpoint loaded once with torch (on first use)."""
        model = self.translators[name].model
        if model.backend != "onnx":
            return model
        if name not in self.twins:
            self.twins[name] = load_translator(self.specs[name], backend="torch", rerank=False)
        return self.twins[name]

    def aligners(self, name: str) -> tuple[Any, Any, Any]:
        """(settings, forward, reverse) that ``attnkit align --model SPEC`` uses for translator ``name``:
        its record's reverse model and scores (loaded once, on first use; torch where the scores need it)."""
        from ..aligning import align_settings

        if name not in self.aligned:
            spec = self.specs[name]
            settings = align_settings(spec, backend=self.backend)
            forward = (
                self.torch_twin(name) if settings.scores != "attention" else self.translators[name].model
            )
            reverse = None
            if settings.reverse:
                on = "torch" if settings.scores != "attention" else "auto"
                reverse = load_translator(settings.reverse, backend=on, rerank=False)
            self.aligned[name] = (settings, forward, reverse)
        return self.aligned[name]

    def attention_maps(self, name: str) -> list[str]:
        """The attention maps that apply to translator ``name`` (no torch imported)."""
        model = self.translators[name].model
        kind = model_kind(model)
        if model.backend == "onnx":  # the maps its torch checkpoint would give
            spec = self.specs.get(name, "")
            has_checkpoint = spec in shipped() or Path(spec).suffix == ".pt"
            if not has_checkpoint:  # an export folder: no torch twin
                return ["attention"]
            kind = kind.removeprefix("onnx-")
        return [m for m in ATTENTION_MAPS if applies(m, kind)]

    @staticmethod
    def pick(models: dict[str, Loaded], name: Any, kind: str) -> Loaded:
        if not models:
            raise UnknownNameError(f"this server was started without a {kind} (attnkit serve --{kind} NAME)")
        if name is None:
            return next(iter(models.values()))
        if not isinstance(name, str) or name not in models:
            raise UnknownNameError(
                f"field 'model': unknown {kind} {shorten(name, 40)}; valid: {', '.join(models)}"
            )
        return models[name]

    def describe(self) -> dict[str, Any]:
        translators = [
            {
                "name": t.name,
                "backend": t.backend,
                "layers": t.model.attention_layers,
                "heads": t.model.attention_heads,
                "self_attention": bool(getattr(t.model, "returns_self_attention", False)),
                "attention_maps": self.attention_maps(t.name),
                "rerank": getattr(t.model, "reranker", None) is not None,
                "default": i == 0,
            }
            for i, t in enumerate(self.translators.values())
        ]
        classifiers = [
            {
                "name": c.name,
                "backend": c.backend,
                "labels": c.model.labels,
                "class_weights": [round(float(w), 6) for w in c.model.class_weights],
                "prior_correction": c.model.prior_correction,
                "default": i == 0,
            }
            for i, c in enumerate(self.classifiers.values())
        ]
        # what a classifier reads of a document: longer ones are cut, and each answer counts the words unread
        reads = {"max_sentences": MAX_SENTENCES, "max_words_per_sentence": MAX_WORDS}
        captioners = [
            {"name": c.name, "backend": c.backend, "grid": list(c.model.grid), "default": i == 0}
            for i, c in enumerate(self.captioners.values())
        ]
        lms = [
            {
                "name": m.name,
                "layers": m.model.attention_layers,
                "heads": m.model.attention_heads,
                "default": i == 0,
            }
            for i, m in enumerate(self.lms.values())
        ]
        return {
            "translators": translators,
            "classifiers": classifiers,
            "captioners": captioners,
            "lms": lms,
            "classifier_reads": reads,
        }


def reprior(result: Classification, weights: list[float], tau_from: float, tau_to: float) -> Classification:
    """The decision at prior correction ``tau_to`` from one made at ``tau_from``:
    p_to(c) ∝ p_from(c) * w_c ** (tau_from - tau_to) (see ``training.prior``)."""
    if tau_from == tau_to:
        return result
    bias = (tau_to - tau_from) * np.log(np.asarray(weights, dtype=np.float64))  # what log_prior gives
    shifted = apply_prior(np.array(list(result.probabilities.values())), bias)
    probs = {c: float(p) for c, p in zip(result.probabilities, shifted)}
    return Classification(
        result.text,
        max(probs, key=lambda c: probs[c]),
        probs,
        result.sentences,
        result.sentence_weights,
        result.word_weights,
        result.unread_words,
    )


def alignment_report(
    aligners: tuple[Any, Any, Any],
    sources: list[str],
    targets: list[str],
    method: str | None,
    gold: str | None,
    null_threshold: float = 0.0,
    probabilities: bool = False,
    lexical: float | None = None,
) -> dict[str, Any]:
    """Links and phrase blocks per pair, coloured against gold links (NAACL text, 1-based) when given,
    with AER; links below ``null_threshold`` dropped, the lexical tables at ``lexical`` (None: the
    model's default), and each pair's soft matrix with ``probabilities``
    (``attnkit align --format json``). A pair longer than the model reads is refused (DataError), never
    aligned on a cut source."""
    links: tuple[list[Links], list[Links]] | None = None
    if gold:
        lengths = [(len(s.split()), len(t.split())) for s, t in zip(sources, targets)]
        links = parse_naacl(gold, len(sources), "field 'gold'", lengths)
    translator = aligners[1]
    for i, source in enumerate(sources):
        n = len(translator.tokenizer.encode(translator.prepare(source)))
        if n > translator.max_source_tokens:
            raise DataError(
                f"field 'sources': item {i} is {n} subwords; the model reads at most "
                f"{translator.max_source_tokens}, so it cannot be aligned whole"
            )
    weight = aligners[0].lexical if lexical is None else lexical  # the lexical tables' share
    given = aligners[0].lexical_given or lexical is not None
    settings = dataclasses.replace(
        aligners[0], method=method or aligners[0].method, lexical=weight, lexical_given=given
    )
    report = run(settings, aligners[1], aligners[2], sources, targets, links, null_threshold=null_threshold)
    summary = report.summary()
    score = {k: summary[k] for k in ("aer", "precision", "recall")} if summary else None
    rows = report.json_rows(probabilities)
    shown = {"method": settings.method, "scores": settings.scores, "lexical": settings.lexical}
    return {"results": rows, "score": score, **shown}
