"""A Hugging Face tokenizer seen as attnkit's ``SubwordTokenizer`` (encode, pieces, decode). Words are
read off its pieces for every tokenizer family by ``attnkit.data.words``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def end_ids(tokenizer: Any) -> list[int]:
    """The special ids the tokenizer appends to every text: ``</s>`` for Marian, BART, T5, FSMT, M2M100;
    ``</s> en_XX`` for mBART's legacy format; none for a tokenizer that appends nothing."""
    probe = list(tokenizer("a")["input_ids"])
    special = set(tokenizer.all_special_ids)
    suffix: list[int] = []
    while probe and probe[-1] in special:
        suffix.insert(0, probe.pop())
    return suffix


class HFTokens:
    """One side (source or target) of a Hugging Face tokenizer. ``encode`` gives the ids the tokenizer
    gives for a text minus the end ids it appends (``suffix``: the translator appends them, as for its own
    models), so the model reads exactly what the tokenizer makes. ``skip``: ids never shown in a decoded
    text (a target language token such as M2M100's ``__fr__``)."""

    def __init__(self, tokenizer: Any, target: bool = False, skip: Sequence[int] = ()) -> None:
        self.tokenizer, self.target = tokenizer, target
        self.eos_id = tokenizer.eos_token_id
        self.suffix = end_ids(tokenizer)
        self.skip = {int(i) for i in skip}
        # FSMT keeps two vocabularies and shows ids as target pieces: a source id is read in its own
        self.source_vocab: dict[int, str] | None = None
        if not target and type(tokenizer).__name__.startswith("FSMT"):
            self.source_vocab = {int(v): str(k) for k, v in tokenizer.encoder.items()}

    def __len__(self) -> int:
        return len(self.tokenizer)

    def encode(self, text: str) -> list[int]:
        found = self.tokenizer(text_target=text) if self.target else self.tokenizer(text)
        ids = list(found["input_ids"])
        if self.target:
            return ids[:-1] if ids and ids[-1] == self.eos_id else ids
        n = len(self.suffix)
        return ids[:-n] if n and ids[-n:] == self.suffix else ids

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return [self.encode(t) for t in texts]

    def pieces(self, ids: Sequence[int]) -> list[str]:
        if self.source_vocab is not None:
            return [self.source_vocab.get(int(i), str(self.tokenizer.unk_token)) for i in ids]
        return list(self.tokenizer.convert_ids_to_tokens(list(ids)))

    def decode(self, ids: Sequence[int]) -> str:
        kept = [i for i in ids if i not in self.skip]
        return str(self.tokenizer.decode(kept, skip_special_tokens=True)).strip()
