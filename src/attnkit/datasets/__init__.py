"""Datasets shipped with attnkit (compressed, with attribution): in a source checkout they are here; an
installed wheel fetches them by name into the cache (``attnkit fetch``, ``attnkit.store``).

- ``tatoeba_eng_fra/``: the canonical English-French train/dev/test split of the Tatoeba
  sentence pairs (www.manythings.org/anki and tatoeba.org, CC BY 2.0 FR; see ABOUT-manythings.txt
  and SOURCE.md there).
- ``tatoeba_eng_deu/``: the English-German split made by the same rules (SPLIT.md there).
- ``reviews/``: women's clothing reviews with 1-5 star labels (Kaggle, CC0), split for HAN.
"""

from __future__ import annotations

from pathlib import Path

from .. import store
from ..errors import UsageError

ROOT = Path(__file__).resolve().parent

PARALLEL = {
    "tatoeba-eng-fra": ("tatoeba_eng_fra", "en", "fr"),
    "tatoeba-eng-deu": ("tatoeba_eng_deu", "en", "de"),
    "tatoeba-fra-eng": ("tatoeba_eng_fra", "fr", "en"),  # the en-fr split read French -> English
    "tatoeba-deu-eng": ("tatoeba_eng_deu", "de", "en"),  # the en-de split read German -> English
}


DOCUMENTS = {"reviews": "reviews"}


def document_split(name: str, split: str) -> Path:
    """Path of a shipped document split (JSONL.gz). Unknown names list the valid ones."""
    if name not in DOCUMENTS:
        raise UsageError(f"unknown document dataset {name!r}; valid names: {', '.join(sorted(DOCUMENTS))}")
    if split not in ("train", "dev", "test"):
        raise UsageError(f"unknown split {split!r}; valid: dev, test, train")
    return store.folder("datasets", DOCUMENTS[name]) / f"{split}.jsonl.gz"


def parallel_split(name: str, split: str) -> tuple[Path, Path]:
    """Paths of a shipped parallel split: ``(src.gz, tgt.gz)``. Unknown names list the valid ones."""
    if name not in PARALLEL:
        raise UsageError(f"unknown dataset {name!r}; valid names: {', '.join(sorted(PARALLEL))}")
    if split not in ("train", "dev", "test"):
        raise UsageError(f"unknown split {split!r}; valid: dev, test, train")
    folder, src, tgt = PARALLEL[name]
    found = store.folder("datasets", folder)
    return found / f"{split}.{src}.gz", found / f"{split}.{tgt}.gz"
