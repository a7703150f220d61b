"""What translating and classifying return: one result type per task, checked when built
(``invariants``), with their JSON forms and the input checks every backend shares (torch-free).
The loops that make them live in the task bases (``translate_base``, ``classify_base``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .data.documents import MAX_SENTENCES, MAX_WORDS, Document
from .errors import DataError, UsageError
from .invariants import check_classification, check_inspection, check_translation


@dataclass
class Translation:
    """One translated sentence. ``attention`` is (T, S): target tokens (with </s>) x source tokens."""

    source: str
    translation: str
    source_tokens: list[str]
    target_tokens: list[str]
    attention: np.ndarray
    score: float
    alternatives: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    alternative_scores: list[float] = field(default_factory=list)
    # the ids behind source_tokens / target_tokens (without </s>), so maps can be recomputed exactly
    source_ids: list[int] = field(default_factory=list, repr=False)
    target_ids: list[int] = field(default_factory=list, repr=False)
    # each alternative's pieces (with </s>) and attention (T_k, S), as for the best translation
    alternative_tokens: list[list[str]] = field(default_factory=list, repr=False)
    alternative_attention: list[np.ndarray] = field(default_factory=list, repr=False)
    # what ``attention`` holds: the decoder's weights, or a derived map (``explain.translator_maps``)
    attention_map: str = "attention"
    # noisy-channel reranking (``rerank``): weights and each candidate's forward, channel, combined scores
    rerank: dict[str, Any] | None = None
    # each alternative's target ids (without </s>), so a reranked alternative keeps its exact ids
    alternative_ids: list[list[int]] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        check_translation(self)

    def _repr_html_(self) -> str:
        """How a notebook shows it: the explorer's view, offline (``attnkit.notebook``)."""
        from .names import resolve

        return str(resolve("attnkit.notebook:html")(self))

    def to_json(self, alternatives: bool = True) -> dict[str, Any]:
        """JSON-ready; ``alternatives``: with the n-best's pieces and attention (when there are any)."""
        return {
            "source": self.source,
            "translation": self.translation,
            "source_tokens": self.source_tokens,
            "target_tokens": self.target_tokens,
            "attention": _rounded(self.attention),
            **({"attention_map": self.attention_map} if self.attention_map != "attention" else {}),
            "score": round(self.score, 5),
            **({"alternatives": self.alternatives} if self.alternatives else {}),
            **(
                {"alternative_scores": [round(x, 5) for x in self.alternative_scores]}
                if self.alternatives
                else {}
            ),
            **({"warnings": self.warnings} if self.warnings else {}),
            **({"rerank": self.rerank} if self.rerank else {}),
            **(
                {
                    "alternative_tokens": self.alternative_tokens,
                    "alternative_attention": [_rounded(a) for a in self.alternative_attention],
                }
                if alternatives and self.alternative_attention
                else {}
            ),
        }


def _rounded(matrix: np.ndarray) -> list[list[float]]:
    return [[round(float(x), 5) for x in row] for row in matrix]


def layer_attention_json(maps: np.ndarray) -> list[Any]:
    """Per layer, head, target and source token (L, H, T, S), rounded as ``to_json`` rounds."""
    return list(np.round(np.asarray(maps, dtype=np.float64), 5).tolist())


def explorer_rows(
    translator: Any,
    results: Sequence[Translation],
    layers: bool = True,
    alternatives: bool = True,
    self_attention: bool = False,
) -> list[dict[str, Any]]:
    """``to_json`` of each result, with every layer's and head's cross-attention for a Transformer
    (``layers``), the n-best alternatives' pieces and attention (``alternatives``) and the encoder's and
    decoder's self-attention where the backend returns it (``self_attention``)."""
    rows = []
    for r in results:
        row = r.to_json(alternatives)
        found = translator.self_attention(r) if self_attention and r.translation else None
        for side, maps in (found or {}).items():
            row[f"{side}_attention"] = layer_attention_json(maps)
        maps = translator.layer_attention(r) if layers and r.translation else None
        if maps is not None:
            row["layer_attention"] = layer_attention_json(maps)
        rows.append(row)
    return rows


def prior_json(classifier: Any) -> dict[str, Any]:
    """What a page needs to re-decide under another prior correction (``training.prior``)."""
    weights = [float(w) for w in classifier.class_weights]
    return {
        "labels": list(classifier.labels),
        "class_weights": weights,
        "prior_correction": classifier.prior_correction,
    }


@dataclass
class Classification:
    """One document: predicted label, class probabilities, sentences as words, and attention."""

    text: str
    label: str
    probabilities: dict[str, float]
    sentences: list[list[str]]
    sentence_weights: list[float]
    word_weights: list[list[float]]
    # words the model did not read (after the 60th word of a sentence or the 30th sentence): weight 0
    unread_words: int = 0

    def __post_init__(self) -> None:
        check_classification(self)

    def _repr_html_(self) -> str:
        """How a notebook shows it: the explorer's view, offline (``attnkit.notebook``)."""
        from .names import resolve

        return str(resolve("attnkit.notebook:html")(self))

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "label": self.label,
            "probabilities": {k: round(v, 5) for k, v in self.probabilities.items()},
            "sentences": self.sentences,
            "sentence_weights": [round(w, 5) for w in self.sentence_weights],
            "word_weights": [[round(w, 5) for w in row] for row in self.word_weights],
            "unread_words": self.unread_words,
        }


@dataclass
class Inspection:
    """A causal LM's attention over a long text (``attnkit.inspect``). L layers, H query heads (grouped
    ``H // kv_heads`` per key head), T tokens (the prompt's ``prompt_tokens`` first, then any generated):
    ``received`` (L, T): the attention each token receives per layer (mean over heads and query rows);
    ``entropy`` (nats), ``distance`` (tokens), ``sink`` (share on the first 4 tokens), ``previous`` (share
    on the token before) (L, H), each a mean over query rows; ``induction`` (L, H): the induction probe's
    score (None when not run); ``roles`` (L, H) from ``explain.roles``; ``captured``: the rows kept, each
    ``{"layer", "head", "rows", "weights" (R, T)}``."""

    model: str
    tokens: list[str]
    ids: list[int]
    prompt_tokens: int
    kv_heads: int
    received: np.ndarray
    entropy: np.ndarray
    distance: np.ndarray
    sink: np.ndarray
    previous: np.ndarray
    induction: np.ndarray | None
    roles: list[list[str]]
    captured: list[dict[str, Any]]
    text: str = ""
    # derived maps of the captured rows: {"rollout" | "grad": {"rows": [...], "weights": (R, T)}}
    maps: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_inspection(self)

    def _repr_html_(self) -> str:
        """How a notebook shows it: the explorer's long-context view, offline (``attnkit.notebook``)."""
        from .names import resolve

        return str(resolve("attnkit.notebook:html")(self))

    def heads(self) -> list[dict[str, Any]]:
        """One row per head: layer, head, its key head group, role and numbers."""
        layers, heads = self.entropy.shape
        group = max(heads // max(self.kv_heads, 1), 1)
        return [
            {
                "layer": layer,
                "head": h,
                "kv_group": h // group,
                "role": self.roles[layer][h],
                "entropy": round(float(self.entropy[layer, h]), 4),
                "distance": round(float(self.distance[layer, h]), 3),
                "sink": round(float(self.sink[layer, h]), 4),
                "previous": round(float(self.previous[layer, h]), 4),
                "induction": None if self.induction is None else round(float(self.induction[layer, h]), 4),
            }
            for layer in range(layers)
            for h in range(heads)
        ]

    def to_json(self, digits: int = 5) -> dict[str, Any]:
        rounded = lambda a: np.round(np.asarray(a, dtype=np.float64), digits).tolist()  # noqa: E731
        return {
            "model": self.model,
            "tokens": self.tokens,
            "ids": self.ids,
            "prompt_tokens": self.prompt_tokens,
            "layers": int(self.entropy.shape[0]),
            "heads": int(self.entropy.shape[1]),
            "kv_heads": self.kv_heads,
            "received": rounded(self.received),
            "head_stats": self.heads(),
            "captured": [
                {
                    "layer": c["layer"],
                    "head": c["head"],
                    "rows": list(c["rows"]),
                    "weights": rounded(c["weights"]),
                }
                for c in self.captured
            ],
            "maps": {
                name: {"rows": list(m["rows"]), "weights": rounded(m["weights"])}
                for name, m in self.maps.items()
            },
        }


def classification(
    doc: Document,
    labels: Sequence[str],
    probs: np.ndarray,
    words: np.ndarray,
    sentences: np.ndarray,
    limits: tuple[int, int] = (MAX_SENTENCES, MAX_WORDS),
) -> Classification:
    """Shapes: probs (C,), words (N, W), sentences (N,) of one document in its batch. Every word of
    the document is listed; the ones past the model's ``limits`` (sentences, words per sentence) get
    weight 0 and are counted."""
    max_sentences, max_words = limits
    read = [min(len(s), max_words) if j < max_sentences else 0 for j, s in enumerate(doc.sentences)]
    word_weights = [
        (words[j, :n].tolist() if n else []) + [0.0] * (len(s) - n)
        for j, (s, n) in enumerate(zip(doc.sentences, read))
    ]
    n_read = min(len(doc.sentences), max_sentences)
    sentence_weights = sentences[:n_read].tolist() + [0.0] * (len(doc.sentences) - n_read)
    return Classification(
        text=doc.text,
        label=labels[int(probs.argmax())],
        probabilities={c: float(p) for c, p in zip(labels, probs)},
        sentences=[list(s) for s in doc.sentences],
        sentence_weights=sentence_weights,
        word_weights=word_weights,
        unread_words=sum(len(s) for s in doc.sentences) - sum(read),
    )


def check_unicode(texts: Sequence[str], what: str = "text") -> None:
    """A DataError naming the first item that is not a string or holds a lone surrogate (text that
    cannot be UTF-8, e.g. from decoding bytes with errors="surrogateescape")."""
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise DataError(f"{what} {i + 1} is a {type(text).__name__}, not a string")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise DataError(
                f"{what} {i + 1} is not valid Unicode (a lone surrogate at character {e.start})"
            ) from None


def check_texts(texts: Sequence[str]) -> None:
    check_unicode(texts)
    empty = [i for i, t in enumerate(texts) if not t.strip()]
    if empty:
        raise DataError(f"text {empty[0] + 1} is empty: nothing to classify")


def check_tau(tau: float) -> float:
    if not 0.0 <= tau <= 1.0 or math.isnan(tau):
        raise UsageError(
            f"prior correction must be in [0, 1] (0 = off, 1 = divide the class weights out), got {tau}"
        )
    return float(tau)


def log_prior(class_weights: Sequence[float], tau: float) -> np.ndarray | None:
    """``tau * log w`` (C,) to subtract from logits (``training.prior``); None when tau is 0. The one
    place the prior correction's bias is computed (torch and ONNX classifiers, the server)."""
    tau = check_tau(tau)
    return None if tau == 0.0 else tau * np.log(np.asarray(class_weights, dtype=np.float32))


def apply_prior(probs: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """Probabilities (..., C) with a prior bias (C,) subtracted from their logits, renormalized: the one
    place the correction is applied (a classifier's decisions, the server's re-decisions)."""
    if bias is None:
        return probs
    scaled = np.asarray(probs, dtype=np.float64) * np.exp(-np.asarray(bias, dtype=np.float64))
    return np.asarray(scaled / scaled.sum(-1, keepdims=True), dtype=np.float32)
