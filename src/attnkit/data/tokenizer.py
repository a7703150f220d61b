"""sentencepiece subwords, trained by attnkit on the training split and saved inside checkpoints."""

from __future__ import annotations

import io
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import sentencepiece as spm

from ..errors import CheckpointError, DataError
from ..vocab import BOS, EOS, PAD, UNK

if TYPE_CHECKING:
    from ..checkpoint import Checkpoint

__all__ = ["BOS", "EOS", "PAD", "UNK", "SubwordTokenizer", "train_vocabularies", "vocabularies_from"]


class SubwordTokenizer:
    """A sentencepiece model with fixed special ids: <unk>=0, <pad>=1, <s>=2, </s>=3."""

    def __init__(self, model_proto: bytes) -> None:
        self.model_proto = model_proto
        self.sp = spm.SentencePieceProcessor(model_proto=model_proto)
        if (self.sp.pad_id(), self.sp.bos_id(), self.sp.eos_id()) != (PAD, BOS, EOS):
            raise DataError("sentencepiece model must use pad=1, bos=2, eos=3 (train it with attnkit)")

    @classmethod
    def train(
        cls,
        sentences: Sequence[str],
        vocab_size: int = 8000,
        model_type: str = "unigram",
        seed_sentences: int = 400_000,
    ) -> SubwordTokenizer:
        """Train on ``sentences`` (the training split only). Deterministic for the same input."""
        out = io.BytesIO()
        with tempfile.TemporaryDirectory() as tmp:
            text = Path(tmp) / "train.txt"
            text.write_text("\n".join(s for s in sentences if s) + "\n", encoding="utf-8")
            spm.SentencePieceTrainer.train(
                input=str(text),
                model_writer=out,
                vocab_size=vocab_size,
                model_type=model_type,
                character_coverage=1.0,
                unk_id=UNK,
                pad_id=PAD,
                bos_id=BOS,
                eos_id=EOS,
                input_sentence_size=seed_sentences,
                shuffle_input_sentence=True,
                num_threads=2,
                minloglevel=2,
                hard_vocab_limit=False,
            )
        return cls(out.getvalue())

    @classmethod
    def load(cls, path: str | Path) -> SubwordTokenizer:
        return cls(Path(path).read_bytes())

    def save(self, path: str | Path) -> None:
        Path(path).write_bytes(self.model_proto)

    def __len__(self) -> int:
        return int(self.sp.get_piece_size())

    def encode(self, text: str) -> list[int]:
        return list(self.sp.encode(text))

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        return [list(ids) for ids in self.sp.encode(list(texts))]

    def sample_batch(self, texts: Sequence[str], alpha: float, seed: int) -> list[list[int]]:
        """One segmentation per text sampled from all of the unigram model's segmentations, each with
        probability proportional to P(segmentation)^alpha (Kudo 2018, subword regularization).
        The same (texts, alpha, seed) give the same result: one thread, a seeded generator."""
        spm.set_random_generator_seed(seed)
        ids = self.sp.encode(list(texts), enable_sampling=True, alpha=alpha, nbest_size=-1, num_threads=1)
        return [list(row) for row in ids]

    def pieces(self, ids: Sequence[int]) -> list[str]:
        return [self.sp.id_to_piece(int(i)) for i in ids]

    def decode(self, ids: Sequence[int]) -> str:
        return str(self.sp.decode([int(i) for i in ids if int(i) not in (PAD, BOS, EOS)]))


def train_vocabularies(
    sources: Sequence[str], targets: Sequence[str], vocab_size: int, separate: bool = False
) -> tuple[SubwordTokenizer, SubwordTokenizer]:
    """(source, target) tokenizers: one joint model (the same object twice) or one per side."""
    if not separate:
        joint = SubwordTokenizer.train(list(sources) + list(targets), vocab_size)
        return joint, joint
    return SubwordTokenizer.train(sources, vocab_size), SubwordTokenizer.train(targets, vocab_size)


def vocabularies_from(ckpt: Checkpoint) -> tuple[SubwordTokenizer, SubwordTokenizer]:
    """(source, target) tokenizers stored in a checkpoint; ``target_tokenizer`` only when separate."""
    if ckpt.tokenizer is None:
        raise CheckpointError("the checkpoint has no field 'tokenizer' (sentencepiece model bytes)")
    source = SubwordTokenizer(ckpt.tokenizer)
    target = ckpt.target_tokenizer
    return source, (source if target is None else SubwordTokenizer(target))
