"""Tiny encoder-decoders of the families whose tokenizers add more than one end id or keep two
vocabularies (mBART legacy: ``... </s> en_XX``; M2M100: ``__en__ ... </s>`` and a forced ``__fr__``;
FSMT: separate source and target vocabularies), built offline from their configs with tokenizers made
here. Untrained (random weights, seeded): what the tests check is which ids the model reads."""

from __future__ import annotations

import json
from pathlib import Path

import sentencepiece as spm
import torch

ENGLISH = ["the cat sits on the mat", "where is the dog", "i like tea", "a dog eats"]
FRENCH = ["le chat est assis sur le tapis", "ou est le chien", "j aime le the", "un chien mange"]
SIZES = {"d_model": 16, "encoder_layers": 1, "decoder_layers": 1, "encoder_attention_heads": 2}
SIZES |= {"decoder_attention_heads": 2, "encoder_ffn_dim": 32, "decoder_ffn_dim": 32}
SIZES |= {"max_position_embeddings": 64, "pad_token_id": 1, "eos_token_id": 2, "bos_token_id": 0}


def _sentencepiece(folder: Path) -> str:
    (folder / "text.txt").write_text("\n".join((ENGLISH + FRENCH) * 20))
    spm.SentencePieceTrainer.train(
        input=str(folder / "text.txt"),
        model_prefix=str(folder / "sp"),
        vocab_size=36,
        model_type="unigram",
        bos_id=0,
        pad_id=1,
        eos_id=2,
        unk_id=3,
        minloglevel=2,
    )
    return str(folder / "sp.model")


def _save(folder: Path, tokenizer, model, forced: int | None) -> Path:
    import transformers

    out = folder / "model"
    tokenizer.save_pretrained(out)
    model.save_pretrained(out)
    generation = transformers.GenerationConfig(
        decoder_start_token_id=2, eos_token_id=2, pad_token_id=1, forced_bos_token_id=forced
    )
    generation.save_pretrained(out)
    return out


def mbart(folder: Path) -> Path:
    import transformers

    torch.manual_seed(0)
    tokenizer = transformers.MBartTokenizer(
        vocab_file=_sentencepiece(folder), src_lang="en_XX", tgt_lang="fr_XX"
    )
    config = transformers.MBartConfig(vocab_size=len(tokenizer), decoder_start_token_id=2, **SIZES)
    model = transformers.MBartForConditionalGeneration(config)
    return _save(folder, tokenizer, model, tokenizer.convert_tokens_to_ids("fr_XX"))


def m2m100(folder: Path) -> Path:
    import transformers

    torch.manual_seed(0)
    model_file = _sentencepiece(folder)
    pieces = spm.SentencePieceProcessor(model_file=model_file)
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for i in range(pieces.get_piece_size()):
        vocab.setdefault(pieces.id_to_piece(i), len(vocab))
    (folder / "vocab.json").write_text(json.dumps(vocab))
    tokenizer = transformers.M2M100Tokenizer(
        vocab_file=str(folder / "vocab.json"), spm_file=model_file, src_lang="en", tgt_lang="fr"
    )
    config = transformers.M2M100Config(
        vocab_size=128, decoder_start_token_id=2, **SIZES
    )  # language ids < 128
    model = transformers.M2M100ForConditionalGeneration(config)
    return _save(folder, tokenizer, model, tokenizer.get_lang_id("fr"))


def fsmt(folder: Path) -> Path:
    import transformers

    torch.manual_seed(0)
    specials = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for name, texts in (("src", ENGLISH), ("tgt", FRENCH)):
        words = sorted({w for t in texts for w in t.split()})
        vocab = {**specials, **{w + "</w>": 4 + i for i, w in enumerate(words)}}
        (folder / f"{name}.json").write_text(json.dumps(vocab))
    merges: list[str] = []  # merge each word's characters left to right into the whole word
    for word in sorted({w for t in ENGLISH + FRENCH for w in t.split()}):
        symbols = [*word[:-1], word[-1] + "</w>"]
        for k in range(1, len(symbols)):
            line = f"{''.join(symbols[:k])} {symbols[k]}"
            merges += [] if line in merges else [line]
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n")
    tokenizer = transformers.FSMTTokenizer(
        langs=["en", "fr"],
        src_vocab_file=str(folder / "src.json"),
        tgt_vocab_file=str(folder / "tgt.json"),
        merges_file=str(folder / "merges.txt"),
    )
    n_src, n_tgt = (len(json.loads((folder / f"{n}.json").read_text())) for n in ("src", "tgt"))
    config = transformers.FSMTConfig(
        langs=["en", "fr"], src_vocab_size=n_src, tgt_vocab_size=n_tgt, decoder_start_token_id=2, **SIZES
    )
    model = transformers.FSMTForConditionalGeneration(config)
    return _save(folder, tokenizer, model, None)


FAMILIES = {"mbart": mbart, "m2m100": m2m100, "fsmt": fsmt}
