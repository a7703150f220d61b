"""A Hugging Face tokenizer seen as attnkit's ``SubwordTokenizer`` (encode, pieces, decode). Words are
read off its pieces for every tokenizer family by ``attnkit.data.words``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


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
