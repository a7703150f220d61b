"""A lexical prior for word alignment: how likely each word translates each other word, mixed into the
neural word matrices (``mix``).

The table is IBM Model 1 with fast_align's preference for the diagonal (Brown et al. 1993; Dyer et al.
2013: ``p(i | j) ~ exp(-tension |i / m - j / n|)``, a null word with probability ``NULL``), trained by
EM on a shipped dataset's training pairs, the pairs the translators learned from
(``scripts/lexical_tables.py`` writes ``lexical.npz`` beside the dataset, both directions). The neural
matrices know position and context; the table knows which words translate which: their errors differ
(Hansards trial: neural 0.211, table alone 0.201, mixed half and half 0.128; docs/experiments/defaults.md).

Words are whitespace-separated, as ``attnkit align`` reads them; training text is cut at punctuation
(``words``); both lower-cased.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import UsageError

TOKEN = re.compile(r"\w+|[^\w\s]")
NULL = 0.08  # prior probability that a word aligns to nothing (fast_align's default p0)
TENSION = 4.0  # fast_align's default; the trial set's choice among 4 and 8
FLOOR = 1e-6  # the probability of a word pair the table does not hold
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
        joint = self.lookup(source, target) * diagonal(m, n, tension)
        return (joint / joint.sum(1, keepdims=True))[:, 1:]


def diagonal(m: int, n: int, tension: float) -> np.ndarray:
    """fast_align's alignment prior for m source and n target words: (n, m + 1), column 0 null."""
    i, j = np.arange(1, m + 1)[None, :], np.arange(1, n + 1)[:, None]
    near = np.exp(-tension * np.abs(i / m - j / n))
    return np.concatenate([np.full((n, 1), NULL), (1 - NULL) * near / near.sum(1, keepdims=True)], 1)


def train(
    sources: Sequence[Sequence[str]],
    targets: Sequence[Sequence[str]],
    iterations: int = 5,
    tension: float = TENSION,
    keep: float = 1e-3,
) -> Table:
    """EM for p(target word | source word) on word-list pairs (every (pair, target word, source word or
    null) at once, in flat arrays); entries below ``keep`` are dropped from the table."""
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
    kept = probs >= keep
    return Table(src_vocab, tgt_vocab, unique[kept], probs[kept].astype(np.float32))


def _prior(i, j, m, n, word, tension: float) -> np.ndarray:  # type: ignore[no-untyped-def]
    """``diagonal``'s weights for flat arrays of choices (source position i, 0 = null; target position j,
    1-based; m source and n target words), normalized per target word."""
    near = np.where(i > 0, np.exp(-tension * np.abs(i / np.maximum(m, 1) - j / n)), 0.0)
    total = np.bincount(word, near)[word]
    return np.where(i > 0, (1 - NULL) * near / np.maximum(total, 1e-300), NULL)


def save(path: Path, forward: Table, backward: Table) -> None:
    """Both directions in one ``.npz`` (plain arrays: read back without pickle)."""
    arrays = {}
    for name, table in (("forward", forward), ("backward", backward)):
        arrays[f"{name}_source"] = np.array(_ordered(table.source))
        arrays[f"{name}_target"] = np.array(_ordered(table.target))
        arrays[f"{name}_keys"], arrays[f"{name}_probs"] = table.keys, table.probs.astype(np.float16)
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
                    )
                )
    except (OSError, ValueError, KeyError) as e:
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
        table, out = (self.backward if back else self.forward), []
        for matrix, source, target in zip(matrices, sources, targets):
            given, produced = (target, source) if back else (source, target)
            rows, cols = matrix.shape  # the words the model read (a very long pair is bounded)
            post = table.posterior(given.split()[:cols], produced.split()[:rows])
            out.append((1 - self.weight) * matrix + self.weight * post)
        return out


def prior_for(languages: tuple[str, str] | None, weight: float, model: str) -> Prior | None:
    """The shipped tables for a model's (source, target) languages at ``weight`` (None at 0); a
    UsageError naming the pairs there are tables for when the model's languages have none."""
    from .. import store
    from ..datasets import PARALLEL

    if not 0 <= weight <= 1:
        raise UsageError(f"--lexical must be in [0, 1] (the lexical table's share), got {weight}")
    if weight == 0:
        return None
    known = {(src, tgt): folder for folder, src, tgt in PARALLEL.values()}
    languages = tuple(languages) if languages else None  # type: ignore[assignment]  # (a list from JSON)
    shown = ", ".join(sorted({f"{s}-{t}" for s, t in known}))
    if languages not in known:
        said = "unknown languages" if languages is None else "-".join(languages)
        raise UsageError(
            f"--lexical: no lexical table for {model} ({said}); tables ship for {shown} "
            "(models trained on a shipped dataset): --lexical 0 aligns without one"
        )
    forward, backward = load(store.folder("datasets", known[languages]) / FILE)
    if languages[0] != "en":  # the files hold English -> X first
        forward, backward = backward, forward
    return Prior(forward, backward, weight)
