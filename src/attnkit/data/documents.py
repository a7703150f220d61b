"""Documents for HAN: reading JSONL/CSV, sentence splitting, word tokenization, vocabulary, batches.

No model download: a rule-based splitter written for real review text: abbreviations ("e.g.",
"Mr."), runs of "!!!"/"?!", emojis, missing spaces after a period ("great.I love"), line breaks,
numbers such as "5'8" or "34.5", and "..." inside a sentence.
"""

from __future__ import annotations

import csv
import json
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # torch is imported where batches are made: the text side stays torch-free
    from torch import Tensor

from ..errors import UsageError
from ..vocab import WORD_PAD
from .parallel import DataError, normalize, open_text

PAD_WORD, UNK_WORD = "<pad>", "<unk>"
# Words that end in a period without ending the sentence (not "no." or "in.", which often do).
ABBREVIATIONS = {
    "mr",
    "mrs",
    "ms",
    "dr",
    "st",
    "vs",
    "e.g",
    "i.e",
    "approx",
    "jr",
    "sr",
    "lbs",
    "oz",
    "inc",
    "ft",
    "sz",
    "apt",
    "dept",
    "fig",
}
# A sentence ends at . ! ? (or runs of them, or an ellipsis followed by a capital) before a space/capital/end.
_BOUNDARY = re.compile(r"([.!?]+)(?=\s|$|[A-Z\"'(])")
_WORD = re.compile(
    r"(?:[a-z]\.){2,}"  # e.g. i.e.
    r"|[0-9]+['’][0-9]+\"?"  # heights: 5'8"
    r"|[a-z0-9]+(?:['’][a-z]+)*(?:[.,][0-9]+)*"  # words, it's, 34.5
    r"|\.\.\.|[!?]+|[^\sa-z0-9]",  # ellipsis, !!!, any other symbol or emoji
    re.IGNORECASE,
)


def split_sentences(text: str) -> list[str]:
    """Split review text into sentences (line breaks always split)."""
    sentences: list[str] = []
    for line in re.split(r"[\r\n]+", normalize(text)):
        start = 0
        for match in _BOUNDARY.finditer(line):
            end = match.end()
            before = line[start : match.start()].split()
            last = before[-1].lower().rstrip(".") if before else ""
            if match.group(1) == "." and (last in ABBREVIATIONS or re.fullmatch(r"[a-z]", last)):
                continue  # "e.g." / "Mr." / an initial
            if (
                match.group(1) == "."
                and re.search(r"\d$", line[: match.start()])
                and re.match(r"\d", line[end : end + 1])
            ):
                continue  # a decimal number
            piece = line[start:end].strip()
            if piece:
                sentences.append(piece)
            start = end
        tail = line[start:].strip()
        if tail:
            sentences.append(tail)
    return sentences


def tokenize(sentence: str) -> list[str]:
    """Lower-cased words, numbers (5'8, 34.5), punctuation runs ('!!!') and single symbols/emojis."""
    return [w.lower() for w in _WORD.findall(sentence)]


@dataclass
class Document:
    text: str
    label: int  # 0-based class index
    sentences: list[list[str]]


def document_from_text(text: str, label: int = -1, title: str = "") -> Document:
    sentences = [tokenize(s) for s in ([title] if title.strip() else []) + split_sentences(text)]
    return Document(text, label, [s for s in sentences if s] or [[UNK_WORD]])


def _records(path: Path) -> list[tuple[int, dict[str, object]]]:
    if path.suffix in (".csv",) or path.name.endswith(".csv.gz"):
        with open_text(path) as raw:
            rows = list(csv.DictReader(line.decode("utf-8") for line in raw))
        return [(i + 2, dict(r)) for i, r in enumerate(rows)]
    out = []
    with open_text(path) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise DataError(f"{path}:{number}: not a JSON object ({exc.__class__.__name__})") from None
            if not isinstance(record, dict):
                raise DataError(f"{path}:{number}: expected a JSON object, got {type(record).__name__}")
            out.append((number, record))
    return out


def read_documents(
    path: str | Path,
    text_field: str = "text",
    label_field: str = "label",
    title_field: str = "title",
    labels: Sequence[str] | None = None,
) -> tuple[list[Document], list[str]]:
    """Read JSONL (or CSV). Labels are mapped to class indices in sorted order, or by ``labels``."""
    path = Path(path)
    rows = _records(path)
    raw_labels = []
    for number, record in rows:
        for name in (text_field, label_field):
            if name not in record:
                raise DataError(f"{path}:{number}: missing field {name!r} (fields: {', '.join(record)})")
        if not isinstance(record[text_field], str) or not str(record[text_field]).strip():
            raise DataError(f"{path}:{number}: field {text_field!r} must be non-empty text")
        raw_labels.append(str(record[label_field]))
    classes = list(labels) if labels is not None else sorted(set(raw_labels), key=_label_key)
    index = {c: i for i, c in enumerate(classes)}
    docs = []
    for (number, record), label in zip(rows, raw_labels):
        if label not in index:
            raise DataError(f"{path}:{number}: label {label!r} not among {classes}")
        title = str(record.get(title_field) or "") if title_field else ""
        docs.append(document_from_text(str(record[text_field]), index[label], title))
    return docs, classes


def _label_key(label: str) -> tuple[int, float | str]:
    try:
        return (0, float(label))
    except ValueError:
        return (1, label)


class Vocabulary:
    """Words with count >= min_freq; index 0 = <pad>, 1 = <unk>."""

    def __init__(self, words: Sequence[str]) -> None:
        self.words = list(words)
        self.index = {w: i for i, w in enumerate(self.words)}

    @classmethod
    def build(cls, docs: Sequence[Document], min_freq: int = 2) -> Vocabulary:
        counts = Counter(w for d in docs for s in d.sentences for w in s)
        kept = sorted((w for w, c in counts.items() if c >= min_freq), key=lambda w: (-counts[w], w))
        return cls([PAD_WORD, UNK_WORD, *kept])

    def __len__(self) -> int:
        return len(self.words)

    def encode(self, words: Sequence[str]) -> list[int]:
        return [self.index.get(w, 1) for w in words]


@dataclass
class DocumentBatch:
    """Shapes: words (B, N, W), word_mask (B, N, W) bool, labels (B,). Padded per batch."""

    words: Tensor
    word_mask: Tensor
    labels: Tensor


MAX_SENTENCES, MAX_WORDS = 30, 60  # what a HAN reads of a document: longer ones are cut


def pad_documents(docs: Sequence[list[list[int]]]) -> np.ndarray:
    """Documents as lists of sentences of ids -> (B, N, W) int64, at least (B, 1, 1); an empty
    document is a row of padding (the HAN reads it as its classifier bias)."""
    n = max([len(d) for d in docs] + [1])
    w = max([len(s) for d in docs for s in d] + [1])
    out = np.zeros((len(docs), n, w), dtype=np.int64)
    for b, doc in enumerate(docs):
        for i, ids in enumerate(doc):
            out[b, i, : len(ids)] = ids
    return out


def document_ids(
    docs: Sequence[Document],
    vocab: Vocabulary,
    max_sentences: int = MAX_SENTENCES,
    max_words: int = MAX_WORDS,
) -> np.ndarray:
    """Word ids, 0 = padding, each document's first ``max_sentences`` sentences of at most ``max_words``
    words, left-aligned. Shapes: -> (B, N, W) int64 (NumPy: the ONNX runtime uses it too)."""
    return pad_documents([[vocab.encode(s[:max_words]) for s in d.sentences[:max_sentences]] for d in docs])


def make_document_batch(
    docs: Sequence[Document],
    vocab: Vocabulary,
    max_sentences: int = MAX_SENTENCES,
    max_words: int = MAX_WORDS,
) -> DocumentBatch:
    """Shapes: -> words (B, N, W), word_mask (B, N, W), labels (B,) (see ``document_ids``)."""
    import torch

    words = torch.from_numpy(document_ids(docs, vocab, max_sentences, max_words))
    return DocumentBatch(words, words != WORD_PAD, torch.tensor([d.label for d in docs], dtype=torch.long))


def stratified_split(
    labels: Sequence[int], seed: int = 13, dev: float = 0.1, test: float = 0.1
) -> dict[str, list[int]]:
    """Indices per split, the same class proportions in each; deterministic for a seed."""
    rng = random.Random(seed)
    out: dict[str, list[int]] = {"train": [], "dev": [], "test": []}
    for label in sorted(set(labels)):
        members = [i for i, y in enumerate(labels) if y == label]
        rng.shuffle(members)
        n_test, n_dev = round(len(members) * test), round(len(members) * dev)
        out["test"] += members[:n_test]
        out["dev"] += members[n_test : n_test + n_dev]
        out["train"] += members[n_test + n_dev :]
    return {k: sorted(v) for k, v in out.items()}


def stratified_folds(labels: Sequence[int | str], k: int = 5, seed: int = 13) -> list[list[int]]:
    """Indices of ``k`` cross-validation folds with the same class proportions (each class's shuffled
    members dealt round-robin); every index is in exactly one fold; deterministic for a seed."""
    if k < 2 or k > len(labels):
        raise UsageError(f"k must be in 2..{len(labels)} (the number of documents), got {k}")
    rng = random.Random(seed)
    folds: list[list[int]] = [[] for _ in range(k)]
    dealt = 0
    for label in sorted(set(labels), key=str):
        members = [i for i, y in enumerate(labels) if y == label]
        rng.shuffle(members)
        for j, i in enumerate(members):
            folds[(dealt + j) % k].append(i)
        dealt += len(members)
    return [sorted(f) for f in folds]
