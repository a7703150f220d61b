"""What translating and classifying return, and the steps every backend shares (torch-free).

The torch ``Translator``/``Classifier`` and the ONNX runtime's ``OnnxTranslator``/``OnnxClassifier``
differ only in what computes the numbers (a ``search.Stepper``, a document model); turning text into ids,
length-sorted batches, the search itself and the result objects are written once, here.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar

import numpy as np

from . import search
from .data.arrays import MAX_SOURCE_TOKENS, source_arrays
from .data.documents import MAX_SENTENCES, MAX_WORDS, Document
from .data.parallel import normalize
from .errors import DataError, UsageError
from .invariants import check_classification, check_translation
from .log import progress
from .vocab import EOS, PAD

T = TypeVar("T")
R = TypeVar("R")


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
    # what ``attention`` holds: the decoder's weights, or a derived map (``evaluation.translator_maps``)
    attention_map: str = "attention"
    # noisy-channel reranking (``rerank``): weights and each candidate's forward, channel, combined scores
    rerank: dict[str, Any] | None = None
    # each alternative's target ids (without </s>), so a reranked alternative keeps its exact ids
    alternative_ids: list[list[int]] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        check_translation(self)

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


class Tokens(Protocol):
    """What a translator needs of a tokenizer (attnkit's ``SubwordTokenizer``, or ``hf.tokens.HFTokens``)."""

    def encode(self, text: str) -> list[int]: ...

    def pieces(self, ids: Sequence[int]) -> list[str]: ...

    def decode(self, ids: Sequence[int]) -> str: ...


class TranslatorBase:
    """Text in, ``Translation``s out, over whatever ``_stepper()`` returns (torch model or ONNX graphs).

    Subclasses set ``tokenizer`` (sources), ``target_tokenizer``, ``max_source_tokens``, ``path``."""

    tokenizer: Tokens
    target_tokenizer: Tokens
    max_source_tokens: int = MAX_SOURCE_TOKENS
    path: str = ""
    # end-of-sentence and padding ids and how </s> is shown (a Hugging Face backend has its own)
    eos_id: int = EOS
    pad_id: int = PAD
    eos_piece: str = "</s>"

    backend: str = ""  # torch, onnx or hf: the column of ``tasks.TABLE`` this class is in
    can_rerank: bool = True  # n-best scores are log-probabilities (noisy-channel reranking applies)

    @property
    def kind(self) -> str:
        """The row of ``tasks.PROVIDES`` this translator is (what it provides: layers, values, ...)."""
        raise NotImplementedError

    @property
    def description(self) -> str:
        """What the model is, in words, for messages ("attnkit RNN translator (torch)", ...)."""
        from .tasks import DESCRIPTION

        return DESCRIPTION[self.kind]

    @property
    def source_suffix(self) -> list[int]:
        """The ids appended to every source's ids (attnkit's models: </s>; a Hugging Face tokenizer's own
        end ids, e.g. mBART's ``</s> en_XX``), so the model reads what its tokenizer makes."""
        return [self.eos_id]

    @property
    def source_end_pieces(self) -> list[str]:
        return [self.eos_piece]

    def prepare(self, text: str) -> str:
        """Text as the tokenizer is given it: NFC, no-break spaces as spaces, stripped (attnkit's
        sentencepiece models were trained so); a Hugging Face tokenizer gets the text as it is."""
        return normalize(text)

    def _stepper(self) -> search.Stepper:
        raise NotImplementedError

    def _map_batches(self, fn: Callable[[T], R], batches: list[T]) -> Iterator[R]:
        """``map(fn, batches)`` in order; a backend may run batches in parallel."""
        return map(fn, batches)

    @property
    def attention_layers(self) -> int:
        """Decoder layers with their own cross-attention (0 for an RNN: one map per step)."""
        return 0

    @property
    def attention_heads(self) -> int:
        return 1

    @property
    def default_layer(self) -> int:
        """The decoder layer whose head mean is the model's decoding attention (Transformers)."""
        return -1

    def log_probs(self, sources: Sequence[str], targets: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """log p(target | source) per pair (N,), </s> included, under teacher forcing (any backend): what
        noisy-channel reranking (``rerank``) asks of the channel model."""
        src_ids, tgt_ids = self.pair_ids(sources, targets)
        stepper, out = self._stepper(), []
        for start in range(0, len(src_ids), batch_size):
            chunk = src_ids[start : start + batch_size]
            src, src_mask = source_arrays(chunk, self.source_suffix, self.pad_id)
            out.append(search.forced_scores(stepper, src, src_mask, tgt_ids[start : start + batch_size]))
        return np.concatenate(out) if out else np.zeros(0)

    def _forced_maps(self, src_ids: list[list[int]], tgt_ids: list[list[int]], layers: bool) -> np.ndarray:
        """The backend's step for teacher-forced attention over a batch of pairs (targets without BOS or
        EOS; the backend adds them): the decoding attention (B, T, S) or, with ``layers``, every decoder
        layer's and head's cross-attention (B, L, H, T, S); T and S padded to the batch's longest + 1."""
        raise NotImplementedError

    def forced_attention(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        layer: int | None = None,
        heads: Sequence[int] | None = None,
        batch_size: int = 64,
    ) -> list[tuple[list[str], list[str], np.ndarray]]:
        """Attention while the model is forced to produce the given targets (teacher forcing).

        Returns per pair (source pieces + </s>, target pieces + </s>, attention (T, S)). For a
        Transformer, ``layer`` and ``heads`` choose which cross-attention maps are averaged
        (default: the decoding attention, ``default_layer``'s head mean); for an RNN they must be None.
        """
        chosen = check_heads(layer, heads, self.attention_layers, self.attention_heads, self.default_layer)
        src_ids, tgt_ids = self.pair_ids(sources, targets)
        out: list[tuple[list[str], list[str], np.ndarray]] = []
        for start in progress(range(0, len(src_ids), batch_size), -(-len(src_ids) // batch_size), "aligning"):
            chunk = range(start, min(start + batch_size, len(src_ids)))
            s_ids, t_ids = [src_ids[i] for i in chunk], [tgt_ids[i] for i in chunk]
            if self.attention_layers and (layer is not None or heads):
                maps = self._forced_maps(s_ids, t_ids, True)[:, chosen]  # (B, H, T, S)
                maps = (maps[:, list(heads)] if heads else maps).mean(1)
            else:
                maps = self._forced_maps(s_ids, t_ids, False)  # (B, T, S)
            out += [self.pair_maps(src_ids[i], tgt_ids[i], maps[row]) for row, i in enumerate(chunk)]
        return out

    returns_self_attention: bool = False  # whether ``self_attention`` gives maps (``/api/models`` says so)

    def self_attention(self, result: Translation) -> dict[str, np.ndarray] | None:
        """Every layer's and head's self-attention of a translation: {"encoder": (L, H, S, S), "decoder":
        (L, H, T, T)}; None where the backend does not return it (see ``hf.seq2seq``)."""
        return None

    def layer_attention(self, result: Translation) -> np.ndarray | None:
        """Every decoder layer's and head's cross-attention for a translation: (L, H, T, S); None for RNNs."""
        if not self.attention_layers:
            return None
        src_ids, tgt_ids = self.result_ids(result)
        return np.ascontiguousarray(self._forced_maps([src_ids], [tgt_ids], True)[0])

    def _beam(
        self,
        stepper: Any,
        src: np.ndarray,
        src_mask: np.ndarray,
        beam: int,
        alpha: float,
        n_best: int,
        limits: dict[str, Any],
    ) -> list[list[search.Hypothesis]]:
        """The beam search (attnkit's; a backend may follow its ecosystem's rules, ``search_hf``)."""
        return search.beam(stepper, src, src_mask, beam_size=beam, alpha=alpha, n_best=n_best, **limits)

    def _encode(self, text: str, notes: list[str] | None = None) -> list[int]:
        ids = self.tokenizer.encode(text)
        if len(ids) > self.max_source_tokens:
            message = f"source of {len(ids)} subwords truncated to {self.max_source_tokens}"
            warnings.warn(message, stacklevel=3)
            if notes is not None:
                notes.append(message)
            ids = ids[: self.max_source_tokens]
        return ids

    # noisy-channel reranking of every n-best list (``rerank.NoisyChannel``), or None
    reranker: Any = None

    def translate(
        self,
        sentences: Sequence[str],
        beam: int = 5,
        batch_size: int = 64,
        alpha: float = 1.0,
        n_best: int = 1,
        max_ratio: float = 1.5,
        max_extra: int = 10,
    ) -> list[Translation]:
        """Translate sentences in length-sorted batches; output order = input order. A sentence of S
        source tokens (with </s>) gets at most ``int(max_ratio * S) + max_extra`` tokens before </s>.

        Empty (or whitespace-only) sentences give empty translations without running the model. With a
        ``reranker``, the beam's whole n-best list is reranked and cut to ``n_best``.
        """
        if self.reranker is None or beam < 2:
            return self._translate(sentences, beam, batch_size, alpha, n_best, max_ratio, max_extra)
        self.reranker.alpha = alpha
        found = self._translate(sentences, beam, batch_size, alpha, beam, max_ratio, max_extra)
        return [_cut(r, n_best) for r in self.reranker.rerank(found)]

    def _translate(
        self,
        sentences: Sequence[str],
        beam: int,
        batch_size: int,
        alpha: float,
        n_best: int,
        max_ratio: float,
        max_extra: int,
    ) -> list[Translation]:
        check_unicode(sentences, "sentence")
        texts = [self.prepare(s) for s in sentences]
        notes: list[list[str]] = [[] for _ in texts]
        encoded = [self._encode(t, n) if t else [] for t, n in zip(texts, notes)]
        order = sorted((i for i, t in enumerate(texts) if t), key=lambda i: len(encoded[i]))
        results: list[Translation | None] = [None] * len(texts)
        stepper = self._stepper()

        def decode(chunk: list[int]) -> list[list[search.Hypothesis]]:
            src, src_mask = source_arrays([encoded[i] for i in chunk], self.source_suffix, self.pad_id)
            limits: dict[str, Any] = {"max_ratio": max_ratio, "max_extra": max_extra}
            if beam <= 1:
                return [[h] for h in search.greedy(stepper, src, src_mask, **limits)]
            return self._beam(stepper, src, src_mask, beam, alpha, n_best, limits)

        chunks = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
        decoded = zip(chunks, self._map_batches(decode, chunks))
        for chunk, hyps in progress(decoded, len(chunks), "translating"):
            for i, nbest in zip(chunk, hyps):
                results[i] = self._result(sentences[i], encoded[i], nbest, notes[i])
        return [
            r if r is not None else Translation(s, "", [], [], np.zeros((0, 0), np.float32), 0.0)
            for s, r in zip(sentences, results)
        ]

    def _result(
        self, source: str, src_ids: list[int], nbest: list[search.Hypothesis], notes: list[str]
    ) -> Translation:
        best = nbest[0]
        return Translation(
            source=source,
            translation=self.target_tokenizer.decode(best.tokens),
            source_tokens=self.tokenizer.pieces(src_ids) + self.source_end_pieces,
            target_tokens=self.target_tokenizer.pieces(best.tokens) + [self.eos_piece],
            attention=np.asarray(best.attention, dtype=np.float32),
            score=best.score,
            alternatives=[self.target_tokenizer.decode(h.tokens) for h in nbest[1:]],
            warnings=notes,
            alternative_scores=[h.score for h in nbest[1:]],
            source_ids=list(src_ids),
            target_ids=list(best.tokens),
            alternative_tokens=[self.target_tokenizer.pieces(h.tokens) + [self.eos_piece] for h in nbest[1:]],
            alternative_attention=[np.asarray(h.attention, dtype=np.float32) for h in nbest[1:]],
            alternative_ids=[list(h.tokens) for h in nbest[1:]],
        )

    def result_ids(self, result: Translation) -> tuple[list[int], list[int]]:
        """The ids a translation was decoded from and to (re-encoded from its text if it has none)."""
        src = result.source_ids or self._encode(self.prepare(result.source))
        return src, result.target_ids or self.target_tokenizer.encode(result.translation)

    def pair_maps(
        self, src_ids: Sequence[int], tgt_ids: Sequence[int], maps: np.ndarray
    ) -> tuple[list[str], list[str], np.ndarray]:
        """One pair's (source pieces + </s>, target pieces + </s>, ``maps`` cut to (T, S)) from its
        padded (T', S') rows: what ``forced_attention`` returns per pair."""
        t, s = len(tgt_ids) + 1, len(src_ids) + len(self.source_suffix)
        return (
            self.tokenizer.pieces(list(src_ids)) + self.source_end_pieces,
            self.target_tokenizer.pieces(list(tgt_ids)) + [self.eos_piece],
            maps[:t, :s],
        )

    def pair_ids(
        self, sources: Sequence[str], targets: Sequence[str]
    ) -> tuple[list[list[int]], list[list[int]]]:
        """Source and target ids of sentence pairs (forced attention, alignment)."""
        if len(sources) != len(targets):
            raise DataError(f"{len(sources)} sources but {len(targets)} targets")
        check_unicode(sources, "source")
        check_unicode(targets, "target")
        src_ids = [self._encode(self.prepare(s)) for s in sources]
        return src_ids, [self.target_tokenizer.encode(self.prepare(t)) for t in targets]


def _cut(result: Translation, n_best: int) -> Translation:
    """``result`` with at most ``n_best - 1`` alternatives (the reranked list keeps all its scores)."""
    keep = max(n_best - 1, 0)
    return replace(
        result,
        alternatives=result.alternatives[:keep],
        alternative_scores=result.alternative_scores[:keep],
        alternative_tokens=result.alternative_tokens[:keep],
        alternative_attention=result.alternative_attention[:keep],
        alternative_ids=result.alternative_ids[:keep],
    )


def check_heads(
    layer: int | None, heads: Sequence[int] | None, n_layers: int, n_heads: int, default: int
) -> int:
    """The decoder layer to read (``default`` when None), with ``heads`` checked against ``n_heads``."""
    if not n_layers:
        if layer is not None or heads:
            raise UsageError("--layer/--heads apply to Transformer models only")
        return 0
    chosen = default if layer is None else layer
    if not -n_layers <= chosen < n_layers:
        raise UsageError(f"layer {chosen} out of range: the model has {n_layers} decoder layers")
    bad = [h for h in heads or [] if not 0 <= h < n_heads]
    if bad:
        raise UsageError(f"heads {bad} out of range 0..{n_heads - 1}")
    return chosen % n_layers


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
    """``tau * log w`` (C,) to subtract from logits (``training.prior``); None when tau is 0."""
    tau = check_tau(tau)
    return None if tau == 0.0 else tau * np.log(np.asarray(class_weights, dtype=np.float32))
