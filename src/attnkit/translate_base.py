"""The translation task's base: text in, ``Translation``s out, over whatever a backend's ``_stepper()``
returns (torch model, ONNX graphs, Hugging Face model); torch-free.

The torch ``Translator``, the ONNX runtime's ``OnnxTranslator`` and ``hf.HFTranslator`` differ only in what
computes the numbers (a ``search.Stepper``) and, for Hugging Face, in the tokenizer's own end ids; turning
text into ids, length-sorted batches, the search, reranking, forced and layer attention and the result
objects are written once, here. Results are ``results.Translation`` (checked at construction).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any, Protocol, TypeVar

import numpy as np

from . import search
from .data.arrays import MAX_SOURCE_TOKENS, source_arrays
from .data.parallel import normalize
from .errors import DataError, UsageError
from .log import progress
from .results import Translation, check_unicode
from .vocab import EOS, PAD

T = TypeVar("T")
R = TypeVar("R")


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
    max_target_tokens: int = 2 * MAX_SOURCE_TOKENS  # forced decoding reads at most this many target pieces
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
            found = self._translate(sentences, beam, batch_size, alpha, n_best, max_ratio, max_extra)
        else:
            self.reranker.alpha = alpha
            found = self._translate(sentences, beam, batch_size, alpha, beam, max_ratio, max_extra)
            found = self._rerank(sentences, found, batch_size, n_best)
        for r in found:
            for note in stop_notes(r, len(self.source_suffix), max_ratio, max_extra):
                warnings.warn(f"{r.source[:40]!r}: {note}", stacklevel=2)
                r.warnings.append(note)
        return found

    def _rerank(self, sentences: Sequence[str], found: list[Any], batch_size: int, n_best: int) -> list[Any]:
        """Each decoding batch's n-best lists reranked together (as decoded: a batch's scores depend on
        that batch alone, so ``--engine ray``'s shards of whole batches give the same floats)."""
        assert self.reranker is not None
        order = self.decode_order(sentences)
        out = list(found)
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            for i, r in zip(chunk, self.reranker.rerank([found[i] for i in chunk], self._source_read)):
                out[i] = _cut(r, n_best)
        return out

    def _source_read(self, result: Translation) -> str:
        """The source as this model read it: the text itself, or for a source cut at ``max_source_tokens``
        the cut part (so a channel model scores what was translated, not a 1 MB line)."""
        if len(result.source_ids) < self.max_source_tokens:
            return result.source
        return self.tokenizer.decode(result.source_ids)

    def decode_order(self, sentences: Sequence[str]) -> list[int]:
        """The order ``translate`` decodes sentences in (shortest first, empty ones last): cut into
        runs of ``batch_size``, these are its batches (``--engine ray`` shards the same way, so each
        batch, and every float of its output, is the one a single process makes)."""
        texts = [self.prepare(s) for s in sentences]
        encoded = [self._encode(t, []) if t else [] for t in texts]
        order = sorted((i for i, t in enumerate(texts) if t), key=lambda i: len(encoded[i]))
        return order + [i for i, t in enumerate(texts) if not t]

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
        tgt_ids = [self.target_tokenizer.encode(self.prepare(t)) for t in targets]
        most = self.max_target_tokens
        if any(len(t) > most for t in tgt_ids):  # bounded as decoding is: a 1 MB target is cut, not read
            warnings.warn(f"targets over {most} subwords are read up to {most}", stacklevel=2)
        return src_ids, [t[:most] for t in tgt_ids]


def stop_notes(result: Translation, suffix: int, max_ratio: float, max_extra: int) -> list[str]:
    """What a reader should know about where a translation ended: at the length limit (its end may be
    missing), or under 0.6 times as long as its source in subwords (a model trained on short sentences
    often ends a long one early: "...et sa bre." for 68 words)."""
    n_src, n_tgt = len(result.source_ids), len(result.target_ids)
    if not n_src:
        return []
    if n_tgt >= int(max_ratio * (n_src + suffix)) + max_extra:
        return [
            f"stopped at the length limit ({n_tgt} subwords for a source of {n_src}); its end may be missing"
        ]
    if n_src >= 12 and n_tgt < 0.6 * n_src:  # 0.5% of the 400 longest dev sentences (en-fr)
        return [
            f"the translation has {n_tgt} subwords for a source of {n_src}: the model may have stopped early "
            "(it was trained on single sentences; translate long inputs a sentence at a time)"
        ]
    return []


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
