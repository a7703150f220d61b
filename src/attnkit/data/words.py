"""From subword pieces back to words, for display and word alignment."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

SPECIALS = {"</s>", "<s>", "<pad>"}


def word_groups(pieces: Sequence[str]) -> list[list[int]]:
    """Indices of pieces per word: a piece starting with '▁' (or a special) opens a new word."""
    groups: list[list[int]] = []
    for i, piece in enumerate(pieces):
        if not groups or piece.startswith("\u2581") or piece in SPECIALS or pieces[i - 1] in SPECIALS:
            groups.append([i])
        else:
            groups[-1].append(i)
    return groups


def group_words(pieces: Sequence[str]) -> list[str]:
    """Words spelled from their pieces ('▁ch' 'at' -> 'chat')."""
    return ["".join(pieces[i] for i in g).lstrip("\u2581") or pieces[g[0]] for g in word_groups(pieces)]


def aggregate_to_words(
    attention: np.ndarray, src_pieces: Sequence[str], tgt_pieces: Sequence[str]
) -> np.ndarray:
    """Word-level attention: sum over a source word's pieces (attention mass), mean over a target
    word's pieces (each piece's distribution counts equally). (T, S) -> (T_words, S_words); rows
    still sum to 1."""
    src_groups, tgt_groups = word_groups(src_pieces), word_groups(tgt_pieces)
    cols = np.stack([attention[:, g].sum(axis=1) for g in src_groups], axis=1)  # (T, Sw)
    return np.stack([cols[g].mean(axis=0) for g in tgt_groups], axis=0)  # (Tw, Sw)
