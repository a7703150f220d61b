"""A lexical prior for word alignment: how likely each word translates each other word, mixed into the
neural word matrices (``Prior.mixed``).

Per direction, IBM Model 1 with fast_align's preference for the diagonal (Brown et al. 1993; Dyer et al.
2013: ``p(i | j) ~ exp(-tension |i / m - j / n|)``, a null word with probability ``NULL``) starts an HMM
alignment model (``alignment.hmm``), both trained by EM on a shipped dataset's training pairs, the pairs
the translators learned from (``scripts/lexical_tables.py`` writes ``lexical.npz`` beside the dataset).
The neural matrices know position and context; the table knows which words translate which: their errors
differ (Hansards trial: neural 0.211, the HMM alone 0.112, mixed 0.4 : 0.6 0.092;
docs/experiments/defaults.md).

Words are whitespace-separated, as ``attnkit align`` reads them; training text is cut at punctuation
(``words``); both lower-cased.
"""

from __future__ import annotations

import functools
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import UsageError
from . import hmm

TOKEN = re.compile(r"\w+|[^\w\s]")
NULL = 0.08  # prior probability that a word aligns to nothing (fast_align's default p0)
TENSION = 4.0  # fast_align's default; the trial set's choice among 4 and 8
FLOOR = 1e-6  # the probability of a word pair the table does not hold
KEEP = 1e-4  # entries below this are dropped from a shipped table (1e-3: trial AER 0.092 -> 0.099)
FILE = "lexical.npz"


def words(text: str) -> list[str]:
    """Training text as words: lower-cased, punctuation cut off (Tatoeba is not tokenized)."""
    return TOKEN.findall(text.lower())


@dataclass(frozen=True)
class Table:
    """p(target word | source word) of one direction; word 0 of the source side is null. ``keys``
    sorted, ``source_index * len(target) + target_index``."""

    source: dict[str, int]
    target: dict[str, int]
    keys: np.ndarray  # (K,) int64
    probs: np.ndarray  # (K,) float32
    jumps: np.ndarray | None = None  # the HMM's jump weights (alignment.hmm); None: fast_align's diagonal

    def lookup(self, source: Sequence[str], target: Sequence[str]) -> np.ndarray:
        """t(target word | source word) for a pair of word lists: (T, S + 1), column 0 the null word."""
        s = np.array([0] + [self.source.get(w.lower(), -1) for w in source], dtype=np.int64)
        t = np.array([self.target.get(w.lower(), -1) for w in target], dtype=np.int64)
        keys = s[None, :] * len(self.target) + t[:, None]
        at = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
        found = (self.keys[at] == keys) & (s[None, :] >= 0) & (t[:, None] >= 0)
        return np.where(found, self.probs[at], FLOOR).astype(np.float64)

    def posterior(self, source: Sequence[str], target: Sequence[str], tension: float = TENSION) -> np.ndarray:
        """Each target word's alignment distribution over the source words (T, S): the table times the
        diagonal prior, normalized with the null word, which is then dropped (rows sum to at most 1)."""
        m, n = len(source), len(target)
        if m == 0 or n == 0:
            return np.zeros((n, m))
        if self.jumps is not None and m <= hmm.MAX_SOURCE:
            return hmm.posteriors([self.lookup(source, target)], self.jumps)[0]
        joint = self.lookup(source, target) * diagonal(m, n, tension)
        return (joint / joint.sum(1, keepdims=True))[:, 1:]

    def posteriors(self, pairs: Sequence[tuple[Sequence[str], Sequence[str]]]) -> list[np.ndarray]:
        """``posterior`` of many (source words, target words) pairs; the HMM's in batches of pairs with
        as many source words (0.45 ms a pair alone, ~30 us in a batch); over ``hmm.MAX_SOURCE`` source
        words, IBM Model 1's with the diagonal prior."""
        if self.jumps is None:
            return [self.posterior(source, target) for source, target in pairs]
        out: list[np.ndarray] = [np.zeros((len(t), len(s))) for s, t in pairs]
        by_length: dict[int, list[int]] = {}
        for n, (source, target) in enumerate(pairs):
            if len(source) > hmm.MAX_SOURCE:  # the HMM's cost grows with S^2 T: IBM Model 1's posterior
                out[n] = self.posterior(source, target)
            elif len(source) and len(target):
                by_length.setdefault(len(source), []).append(n)
        for m, members in by_length.items():
            for chunk in _batches(sorted(members, key=lambda n: len(pairs[n][1])), pairs, 2 * m):
                found = hmm.posteriors([self.lookup(*pairs[k]) for k in chunk], self.jumps)
                for k, post in zip(chunk, found):
                    out[k] = post
        return out


def _batches(members: list[int], pairs: Sequence[tuple[Sequence[str], Sequence[str]]], states: int):  # type: ignore[no-untyped-def]
    """``members`` (sorted by target length) in batches of up to 256 pairs and 2M HMM states over the
    batch's longest target (32 MB an array)."""
    chunk: list[int] = []
    for n in members:
        if chunk and (len(chunk) == 256 or (len(chunk) + 1) * len(pairs[n][1]) * states > 2_000_000):
            yield chunk
            chunk = []
        chunk.append(n)
    if chunk:
        yield chunk


def diagonal(m: int, n: int, tension: float) -> np.ndarray:
    """fast_align's alignment prior for m source and n target words: (n, m + 1), column 0 null."""
    near = _closeness(np.arange(1, m + 1)[None, :], np.arange(1, n + 1)[:, None], m, n, tension)
    return np.concatenate([np.full((n, 1), NULL), (1 - NULL) * near / near.sum(1, keepdims=True)], 1)


def train(
    sources: Sequence[Sequence[str]],
    targets: Sequence[Sequence[str]],
    iterations: int = 5,
    tension: float = TENSION,
    keep: float = KEEP,
    hmm_iterations: int = 4,
) -> Table:
    """EM for p(target word | source word) on word-list pairs: IBM Model 1 with the diagonal prior (every
    (pair, target word, source word or null) at once, in flat arrays), then ``hmm_iterations`` of the HMM
    (``alignment.hmm``; 0: none); entries below ``keep`` are dropped from the table."""
    src_vocab: dict[str, int] = {"": 0}
    tgt_vocab: dict[str, int] = {}
    s_ids = [[0] + [src_vocab.setdefault(w, len(src_vocab)) for w in s] for s in sources]
    t_ids = [[tgt_vocab.setdefault(w, len(tgt_vocab)) for w in t] for t in targets]
    s_len = np.array([len(s) for s in s_ids])  # with null
    t_len = np.array([len(t) for t in t_ids])
    flat_s = np.concatenate([np.asarray(s, dtype=np.int64) for s in s_ids])
    flat_t = np.concatenate([np.asarray(t, dtype=np.int64) for t in t_ids] + [np.zeros(0, np.int64)])
    pair = np.repeat(np.arange(len(t_len)), t_len)  # pair of each target word
    per = s_len[pair]  # source positions (with null) each target word chooses among
    word = np.repeat(np.arange(len(flat_t)), per)  # the target word of each choice
    i = np.arange(len(word)) - np.repeat(np.cumsum(per) - per, per)  # its source position, 0 = null
    s_start = np.concatenate([[0], np.cumsum(s_len)[:-1]])
    t_start = np.concatenate([[0], np.cumsum(t_len)[:-1]])
    keys = flat_s[s_start[pair][word] + i] * len(tgt_vocab) + flat_t[word]
    unique, index = np.unique(keys, return_inverse=True)
    prior = _prior(
        i, (np.arange(len(flat_t)) - t_start[pair])[word] + 1, per[word] - 1, t_len[pair][word], word, tension
    )
    probs = np.ones(len(unique))
    for _ in range(iterations):
        weight = probs[index] * prior
        share = weight / np.bincount(word, weight, len(flat_t))[word]
        counts = np.bincount(index, share, len(unique))
        probs = counts / np.bincount(unique // len(tgt_vocab), counts)[unique // len(tgt_vocab)]
    jumps = None
    if hmm_iterations:
        s_arrays, t_arrays = (
            [np.asarray(x, dtype=np.int64) for x in s_ids],
            [np.asarray(x, dtype=np.int64) for x in t_ids],
        )
        probs, jumps = hmm.train(s_arrays, t_arrays, unique, probs, len(tgt_vocab), hmm_iterations)
    kept = probs >= keep
    return Table(src_vocab, tgt_vocab, unique[kept], probs[kept].astype(np.float32), jumps)


def _prior(i, j, m, n, word, tension: float) -> np.ndarray:  # type: ignore[no-untyped-def]
    """``diagonal``'s weights for flat arrays of choices (source position i, 0 = null; target position j,
    1-based; m source and n target words), normalized per target word."""
    near = np.where(i > 0, _closeness(i, j, np.maximum(m, 1), n, tension), 0.0)
    total = np.bincount(word, near)[word]
    return np.where(i > 0, (1 - NULL) * near / np.maximum(total, 1e-300), NULL)


def _closeness(i, j, m, n, tension: float):  # type: ignore[no-untyped-def]
    """fast_align's ``exp(-tension |i / m - j / n|)``: source position i of m, target position j of n."""
    return np.exp(-tension * np.abs(i / m - j / n))


def save(path: Path, forward: Table, backward: Table) -> None:
    """Both directions in one ``.npz`` (plain arrays: read back without pickle)."""
    arrays = {}
    for name, table in (("forward", forward), ("backward", backward)):
        arrays[f"{name}_source"] = np.array(_ordered(table.source))
        arrays[f"{name}_target"] = np.array(_ordered(table.target))
        arrays[f"{name}_keys"], arrays[f"{name}_probs"] = table.keys, table.probs.astype(np.float16)
        if table.jumps is not None:
            arrays[f"{name}_jumps"] = table.jumps
    with open(path, "wb") as handle:
        np.savez_compressed(handle, **arrays)  # type: ignore[arg-type]


def _ordered(vocab: dict[str, int]) -> list[str]:
    return sorted(vocab, key=vocab.__getitem__)


@functools.lru_cache(maxsize=4)
def load(path: Path) -> tuple[Table, Table]:
    """(source->target, target->source) tables of a ``save``d file; a damaged file is one line."""
    try:
        with np.load(path, allow_pickle=False) as data:
            tables = []
            for name in ("forward", "backward"):
                source, target = data[f"{name}_source"].tolist(), data[f"{name}_target"].tolist()
                tables.append(
                    Table(
                        {w: k for k, w in enumerate(source)},
                        {w: k for k, w in enumerate(target)},
                        data[f"{name}_keys"].astype(np.int64),
                        data[f"{name}_probs"].astype(np.float32),
                        data[f"{name}_jumps"].astype(np.float64) if f"{name}_jumps" in data else None,
                    )
                )
    except FileNotFoundError:
        raise
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
        raise UsageError(f"{path}: not a lexical table ({str(e)[:120]})") from None
    return tables[0], tables[1]


@dataclass(frozen=True)
class Prior:
    """The tables of the pairs' two directions (source->target words, target->source words) and the
    weight each direction's word matrix gives them: ``(1 - weight) * neural + weight * table``."""

    forward: Table
    backward: Table
    weight: float

    def mixed(
        self,
        matrices: Sequence[np.ndarray],
        sources: Sequence[str],
        targets: Sequence[str],
        back: bool = False,
    ) -> list[np.ndarray]:
        """Word matrices with the table mixed in: the forward direction's (T_words, S_words), or with
        ``back`` the reverse model's (S_words, T_words)."""
        table, pairs = (self.backward if back else self.forward), []
        for matrix, source, target in zip(matrices, sources, targets):
            given, produced = (target, source) if back else (source, target)
            rows, cols = matrix.shape  # the words the model read (a very long pair is bounded)
            pairs.append((given.split()[:cols], produced.split()[:rows]))
        found = table.posteriors(pairs)
        return [(1 - self.weight) * m + self.weight * post for m, post in zip(matrices, found)]


def prior_for(
    languages: tuple[str, str] | None, weight: float, model: str, given: bool = True
) -> Prior | None:
    """The shipped tables for a model's (source, target) languages at ``weight`` (None at 0). A UsageError
    naming the pairs there are tables for when the model's languages have none; tables not installed: a
    UsageError saying how to fetch them when the weight was ``given``, else (a default weight) None and
    one line on stderr (the links then come from the neural matrices alone)."""
    from .. import store
    from ..datasets import PARALLEL
    from ..errors import NotFoundError

    if not 0 <= weight <= 1:
        raise UsageError(f"lexical weight: expected a number in [0, 1], got {weight}")
    if weight == 0:
        return None
    known = {(src, tgt): (name, folder) for name, (folder, src, tgt) in PARALLEL.items()}
    languages = tuple(languages) if languages else None  # type: ignore[assignment]  # (a list from JSON)
    if languages not in known:
        said = "unknown languages" if languages is None else "-".join(languages)
        shown = ", ".join(sorted(f"{s}-{t}" for s, t in known))
        raise UsageError(
            f"no lexical tables for {model} ({said}); they ship for {shown} (models trained on a shipped "
            "dataset): a lexical weight of 0 (--lexical 0) aligns without them"
        )
    name, folder = known[languages]  # type: ignore[index]
    try:
        forward, backward = load(store.folder("datasets", folder) / FILE)
    except (NotFoundError, FileNotFoundError) as e:
        hint = f"the lexical tables of {name} are not installed (attnkit fetch {folder} --from SOURCE)"
        if given:
            raise UsageError(f"{hint}: or align without them, --lexical 0 ({str(e)[:100]})") from None
        from ..log import log

        log.info(f"align: {hint}: aligning without them (Hansards AER 0.212, not 0.096)")
        return None
    if languages[0] != "en":  # type: ignore[index]  # the files hold English -> X first
        forward, backward = backward, forward
    return Prior(forward, backward, weight)
