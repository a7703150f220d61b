"""Pretrained word vectors for the HAN from WordLlama's token embeddings (no download, no network).

The ``wordllama`` package (MIT, Lee Miller 2024, https://github.com/dleemiller/WordLlama) ships in its
wheel a table of 32,000 token embeddings (L2 "supercat": LLM token embeddings trained further for
sentence similarity, 256 dimensions, fp16) and the Llama-2 sentencepiece tokenizer they belong to. A
vocabulary word's vector is the mean of the embeddings of its subword tokens (``" " + word``); with
fewer than 256 dimensions the vocabulary's vectors are projected onto their top principal components.
Rows are scaled to a mean norm of ``ROW_NORM * sqrt(dim / 100)``, the size the HAN's word2vec-initialised
embeddings have (4.27 in the shipped ``reviews-han``), so training starts from the same scale.

Only the two data files are read (``safetensors`` and ``tokenizers``); ``wordllama``'s own loader,
which fetches the tokenizer from the network, is never called.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from ..errors import ConfigError

FULL_DIM = 256
ROW_NORM = 4.0
_WEIGHTS = "weights/l2_supercat_256.safetensors"
_TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
_SPECIAL = 3  # <unk>, <s>, </s>


def package_files() -> tuple[Path, Path]:
    """(weights, tokenizer) inside the installed ``wordllama`` package, or a ValueError naming the fix."""
    spec = importlib.util.find_spec("wordllama")
    roots = list(spec.submodule_search_locations or []) if spec else []
    for root in map(Path, roots):
        weights, tokenizer = root / _WEIGHTS, root / _TOKENIZER
        if weights.is_file() and tokenizer.is_file():
            return weights, tokenizer
    raise ConfigError(
        "training.pretrained_vectors: wordllama needs the wordllama package and its shipped files "
        f"({_WEIGHTS}, {_TOKENIZER}): pip install 'attnkit[vectors]'"
    )


def token_vectors(words: Sequence[str]) -> Tensor:
    """The mean WordLlama token embedding of each word. Shapes: words (V,) -> (V, 256) float32."""
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    weights, tokenizer_file = package_files()
    table = load_file(str(weights))["embedding.weight"].astype(np.float32)  # (32000, 256)
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    out = np.zeros((len(words), table.shape[1]), dtype=np.float32)
    encodings = tokenizer.encode_batch([" " + w for w in words], add_special_tokens=False)
    for row, encoding in enumerate(encodings):
        ids = [i for i in encoding.ids if i >= _SPECIAL]
        if ids:
            out[row] = table[ids].mean(0)
    return torch.from_numpy(out)


def wordllama_vectors(words: Sequence[str], dim: int, skip: int = 2) -> Tensor:
    """Vectors (V, dim) for a vocabulary whose first ``skip`` entries are specials (<pad>, <unk>): those
    rows are zero. ``dim`` at most 256; below it, the top ``dim`` principal components of the
    vocabulary's vectors. Shapes: words (V,) -> (V, dim)."""
    if not 1 <= dim <= FULL_DIM:
        raise ConfigError(f"model.han.embed_size must be 1..{FULL_DIM} for wordllama vectors, got {dim}")
    vectors = token_vectors(words[skip:]).double()  # (V - skip, 256)
    if dim < FULL_DIM:
        centred = vectors - vectors.mean(0)
        _, _, basis = torch.linalg.svd(centred, full_matrices=True)  # (256, 256), rows by variance
        vectors = centred @ basis[:dim].T  # (V - skip, dim)
    norms = vectors.norm(dim=1).mean().clamp_min(1e-12)
    vectors = vectors * (ROW_NORM * (dim / 100) ** 0.5 / norms)
    return torch.cat([torch.zeros(skip, dim, dtype=vectors.dtype), vectors]).float()
