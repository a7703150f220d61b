"""From subword pieces back to words, for display and word alignment."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# special tokens of attnkit's and the common Hugging Face vocabularies: each is a word of its own
SPECIALS = {"</s>", "<s>", "<pad>", "[CLS]", "[SEP]", "[PAD]", "<|endoftext|>"}
SENTENCEPIECE, BYTE_BPE, WORDPIECE = "\u2581", "\u0120", "##"


def family(pieces: Sequence[str]) -> str:
    """The marker of a tokenizer family, read off the pieces: sentencepiece '▁' (word starts), byte-level
    BPE 'Ġ' (word starts, but the first word has none), WordPiece '##' (continuations)."""
    content = [p for p in pieces if p not in SPECIALS]
    if any(p.startswith(SENTENCEPIECE) for p in content):
        return SENTENCEPIECE
    if any(p.startswith(BYTE_BPE) for p in content):
        return BYTE_BPE
    return WORDPIECE


def word_starts(pieces: Sequence[str]) -> list[bool]:
    """Whether each piece begins a word; a special token is a word of its own."""
    marker, out = family(pieces), []
    for i, piece in enumerate(pieces):
        after_special = i == 0 or pieces[i - 1] in SPECIALS
        if piece in SPECIALS or after_special:
            out.append(True)
        elif marker == WORDPIECE:
            out.append(not piece.startswith(WORDPIECE))
        else:
            out.append(piece.startswith(marker))
    return out


def word_groups(pieces: Sequence[str]) -> list[list[int]]:
    """Indices of pieces per word (``word_starts``): '▁ch' 'at' / 'ĠL' 'ove' / 'lo' '##ve' are one word."""
    groups: list[list[int]] = []
    for i, start in enumerate(word_starts(pieces)):
        if start or not groups:
            groups.append([i])
        else:
            groups[-1].append(i)
    return groups


def special_words(pieces: Sequence[str]) -> list[bool]:
    """Per word of ``word_groups``: whether it is a special token (</s>, <s>, [CLS], ...)."""
    return [len(g) == 1 and pieces[g[0]] in SPECIALS for g in word_groups(pieces)]


def _spell(parts: Sequence[str]) -> str:
    text = "".join(p[2:] if p.startswith(WORDPIECE) else p for p in parts)
    return text.lstrip(SENTENCEPIECE).lstrip(BYTE_BPE)


def group_words(pieces: Sequence[str]) -> list[str]:
    """Words spelled from their pieces ('▁ch' 'at' -> 'chat', 'ĠL' 'ove' -> 'Love', 'lo' '##ve' -> 'love')."""
    return [_spell([pieces[i] for i in g]) or pieces[g[0]] for g in word_groups(pieces)]


def aggregate_to_words(
    attention: np.ndarray, src_pieces: Sequence[str], tgt_pieces: Sequence[str]
) -> np.ndarray:
    """Word-level attention: sum over a source word's pieces (attention mass), mean over a target
    word's pieces (each piece's distribution counts equally). (T, S) -> (T_words, S_words); rows
    still sum to 1."""
    src_groups, tgt_groups = word_groups(src_pieces), word_groups(tgt_pieces)
    cols = np.stack([attention[:, g].sum(axis=1) for g in src_groups], axis=1)  # (T, Sw)
    return np.stack([cols[g].mean(axis=0) for g in tgt_groups], axis=0)  # (Tw, Sw)
