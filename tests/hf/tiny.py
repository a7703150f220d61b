"""Tiny Hugging Face models of each family, built here from their configs with tokenizers trained in the
test (no download), trained for a few hundred steps on a handful of pairs so that their outputs are real
words, and saved with ``save_pretrained`` to a folder that attnkit loads like any other."""

from __future__ import annotations

import io
import json
from pathlib import Path

PAIRS = [
    ("the cat sits on the mat", "le chat est assis sur le tapis"),
    ("the dog sleeps", "le chien dort"),
    ("i like the cat", "j'aime le chat"),
    ("the dog eats", "le chien mange"),
    ("i like tea", "j'aime le thé"),
    ("the cat eats", "le chat mange"),
    ("where is the dog", "où est le chien"),
    ("the mat is red", "le tapis est rouge"),
]
SOURCES = [s for s, _ in PAIRS]
TARGETS = [t for _, t in PAIRS]


def _sentencepiece(texts: list[str], path: Path, vocab_size: int = 40) -> None:
    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(texts * 20),
        model_writer=model,
        vocab_size=vocab_size,
        model_type="unigram",
        character_coverage=1.0,
        unk_id=2,
        bos_id=-1,
        eos_id=1,
        pad_id=0,
        hard_vocab_limit=False,
        minloglevel=2,
    )
    path.write_bytes(model.getvalue())


def _train(model, batch, steps: int, lr: float = 3e-3) -> float:
    import torch

    torch.manual_seed(0)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for _ in range(steps):
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.eval()
    return float(loss.detach())


def marian(folder: Path, steps: int = 300) -> Path:
    """A 2+2-layer Marian (d_model 32, 4 heads) with its own sentencepiece models and vocab.json."""
    import torch
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    _sentencepiece(SOURCES, folder / "source.spm")
    _sentencepiece(TARGETS, folder / "target.spm")
    import sentencepiece as spm

    vocab = {"<pad>": 0, "</s>": 1, "<unk>": 2}
    for name in ("source.spm", "target.spm"):
        sp = spm.SentencePieceProcessor(model_file=str(folder / name))
        for i in range(sp.get_piece_size()):
            vocab.setdefault(sp.id_to_piece(i), len(vocab))
    (folder / "vocab.json").write_text(json.dumps(vocab))
    tokenizer = MarianTokenizer(
        str(folder / "source.spm"), str(folder / "target.spm"), str(folder / "vocab.json")
    )
    config = MarianConfig(
        vocab_size=len(vocab),
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=64,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
        forced_eos_token_id=1,
    )
    torch.manual_seed(0)
    model = MarianMTModel(config)
    batch = tokenizer(SOURCES, text_target=TARGETS, padding=True, return_tensors="pt")
    _train(model, batch, steps)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
