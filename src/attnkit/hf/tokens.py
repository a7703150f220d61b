"""A Hugging Face tokenizer seen as attnkit's ``SubwordTokenizer`` (encode, pieces, decode), and word
starts for every tokenizer family: sentencepiece ``▁``, WordPiece ``##``, byte-level BPE ``Ġ``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

SENTENCEPIECE, WORDPIECE, BYTE_BPE = "\u2581", "##", "\u0120"


class HFTokens:
    """One side (source or target) of a Hugging Face tokenizer. ``encode`` gives the ids the tokenizer
    gives for a text minus a final end-of-sentence id (attnkit appends it, as for its own models)."""

    def __init__(self, tokenizer: Any, target: bool = False) -> None:
        self.tokenizer, self.target = tokenizer, target
        self.eos_id = tokenizer.eos_token_id

    def __len__(self) -> int:
        return len(self.tokenizer)

    def encode(self, text: str) -> list[int]:
        found = self.tokenizer(text_target=text) if self.target else self.tokenizer(text)
        ids = list(found["input_ids"])
        return ids[:-1] if ids and ids[-1] == self.eos_id else ids

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return [self.encode(t) for t in texts]

    def pieces(self, ids: Sequence[int]) -> list[str]:
        return list(self.tokenizer.convert_ids_to_tokens(list(ids)))

    def decode(self, ids: Sequence[int]) -> str:
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=True)).strip()


def word_starts(pieces: Sequence[str], specials: set[str]) -> list[bool]:
    """Whether each piece begins a word, for any tokenizer family: a sentencepiece piece starting with
    ``▁``, a byte-level BPE piece starting with ``Ġ``, a WordPiece piece not starting with ``##``;
    special tokens stand alone. The family is read off the pieces themselves."""
    words = [p for p in pieces if p not in specials]
    if any(p.startswith(SENTENCEPIECE) for p in words):
        marker, starts_word = SENTENCEPIECE, True
    elif any(p.startswith(BYTE_BPE) for p in words):
        marker, starts_word = BYTE_BPE, True
    else:
        marker, starts_word = WORDPIECE, False
    out, previous_special = [], True
    for p in pieces:
        special = p in specials
        begins = special or previous_special or (p.startswith(marker) == starts_word)
        out.append(begins)
        previous_special = special
    return out
