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


def _bpe_files(texts: list[str], folder: Path, vocab_size: int = 320) -> tuple[str, str]:
    """A byte-level BPE (GPT-2/BART family) trained on ``texts``: vocab.json and merges.txt."""
    from tokenizers import ByteLevelBPETokenizer

    bpe = ByteLevelBPETokenizer()
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    bpe.train_from_iterator(texts * 5, vocab_size=vocab_size, min_frequency=1, special_tokens=specials)
    bpe.save_model(str(folder))
    return str(folder / "vocab.json"), str(folder / "merges.txt")


def bart(folder: Path, steps: int = 300) -> Path:
    """A 2+2-layer BART with a byte-level BPE trained on both sides (one joint vocabulary)."""
    import torch
    from transformers import BartConfig, BartForConditionalGeneration, BartTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = BartTokenizer(*_bpe_files(SOURCES + TARGETS, folder))
    config = BartConfig(
        vocab_size=len(tokenizer),
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=64,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.eos_token_id,
        forced_eos_token_id=tokenizer.eos_token_id,
    )
    torch.manual_seed(0)
    model = BartForConditionalGeneration(config)
    batch = tokenizer(SOURCES, text_target=TARGETS, padding=True, return_tensors="pt")
    batch["labels"][batch["labels"] == tokenizer.pad_token_id] = -100
    _train(model, batch, steps)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def t5(folder: Path, steps: int = 300) -> Path:
    """A 2+2-layer T5 with one sentencepiece model for both sides (pad 0, </s> 1, <unk> 2)."""
    import torch
    from transformers import T5Config, T5ForConditionalGeneration, T5Tokenizer

    folder.mkdir(parents=True, exist_ok=True)
    import sentencepiece as spm

    _sentencepiece(SOURCES + TARGETS, folder / "spiece.model", vocab_size=60)
    sp = spm.SentencePieceProcessor(model_file=str(folder / "spiece.model"))
    pieces = [(sp.id_to_piece(i), sp.get_score(i)) for i in range(sp.get_piece_size())]
    tokenizer = T5Tokenizer(vocab=pieces, extra_ids=0)
    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
    )
    torch.manual_seed(0)
    model = T5ForConditionalGeneration(config)
    batch = tokenizer(SOURCES, text_target=TARGETS, padding=True, return_tensors="pt")
    batch["labels"][batch["labels"] == 0] = -100
    _train(model, batch, steps)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


FAMILIES = {"marian": marian, "bart": bart, "t5": t5}


REVIEWS = [
    ("i love this dress, it fits perfectly", "positive"),
    ("great fabric and a lovely colour", "positive"),
    ("perfect fit, i love it", "positive"),
    ("lovely dress, great quality", "positive"),
    ("terrible fabric, it ripped at once", "negative"),
    ("runs small and the colour is awful", "negative"),
    ("awful quality, returned it", "negative"),
    ("it ripped, terrible dress", "negative"),
]


def bert(folder: Path, steps: int = 150) -> Path:
    """A 2-layer BERT sequence classifier (positive/negative) with a WordPiece vocabulary trained here."""
    import torch
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    wordpiece = BertWordPieceTokenizer(lowercase=True)
    wordpiece.train_from_iterator([t for t, _ in REVIEWS] * 5, vocab_size=120, min_frequency=1)
    wordpiece.save_model(str(folder))
    tokenizer = BertTokenizerFast(str(folder / "vocab.txt"))
    labels = ["negative", "positive"]
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=64,
        num_labels=2,
        id2label=dict(enumerate(labels)),
        label2id={name: i for i, name in enumerate(labels)},
    )
    torch.manual_seed(0)
    model = BertForSequenceClassification(config)
    batch = tokenizer([t for t, _ in REVIEWS], padding=True, return_tensors="pt")
    batch["labels"] = torch.tensor([labels.index(y) for _, y in REVIEWS])
    _train(model, batch, steps, lr=1e-3)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def gpt2(folder: Path, steps: int = 200) -> Path:
    """A 2-layer GPT-2 language model with a byte-level BPE trained on the English sentences."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    texts = [f"{s} ." for s in SOURCES]
    vocab, merges = _bpe_files(texts, folder, vocab_size=300)
    tokenizer = GPT2TokenizerFast(vocab, merges, eos_token="</s>", bos_token="<s>", unk_token="<unk>")
    tokenizer.pad_token = "<pad>"
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=64,
        n_embd=32,
        n_layer=2,
        n_head=4,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    model = GPT2LMHeadModel(config)
    batch = tokenizer([t + "</s>" for t in texts], padding=True, return_tensors="pt")
    labels = batch["input_ids"].clone()
    labels[batch["attention_mask"] == 0] = -100
    batch["labels"] = labels
    _train(model, batch, steps)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
