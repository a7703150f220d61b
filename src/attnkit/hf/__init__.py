"""Hugging Face models as attnkit backends: local folders (``config.json``) or Hub ids, never remote code.

``load_hf(path_or_id, task)`` returns a backend of the same base as attnkit's own models for the task
(``HFTranslator`` is a ``TranslatorBase``: attnkit's search over the model's own key/value cache, forced
attention, layer attention, word views). Attention comes from the eager implementation (fused kernels
return no weights). ``transformers`` is the optional extra ``attnkit[hf]``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import UsageError
from .loading import read_config

TASKS = {"translation": "seq2seq", "classification": "classify", "generation": "causal"}


def is_hf_reference(path_or_name: Any) -> bool:
    """A folder holding a Hugging Face ``config.json`` (and no attnkit export manifest), or a Hub id
    ``owner/name`` that is not a path on this machine."""
    if path_or_name is None:
        return False
    text = str(path_or_name)
    path = Path(text)
    if path.is_dir():
        return (path / "config.json").is_file() and not (path / "manifest.json").is_file()
    parts = text.split("/")
    return len(parts) == 2 and all(parts) and not path.exists() and not text.endswith((".pt", ".pth"))


def load_hf(path_or_name: str | Path, task: str = "translation", device: str = "cpu") -> Any:
    """The attnkit backend for a Hugging Face model of ``task``: translation (encoder-decoder models),
    classification (encoder classifiers) or generation (decoder-only LMs continuing a prompt)."""
    if task not in TASKS:
        raise UsageError(f"Hugging Face models for {task} are not supported yet; valid: {', '.join(TASKS)}")
    from ..names import resolve
    from ..tasks import TABLE

    return resolve(TABLE[task].backends["hf"]).from_pretrained(path_or_name, device=device)


def hf_task(path_or_name: str | Path) -> str:
    """translation, classification or generation (a decoder-only LM), from a folder's config.json (its
    architectures); a Hub id not on disk is taken to be a translator."""
    config = Path(str(path_or_name)) / "config.json"
    if not config.is_file():
        return "translation"
    names = read_config(config.parent).get("architectures") or []
    if any("SequenceClassification" in n for n in names):
        return "classification"
    return "generation" if any(n.endswith(("LMHeadModel", "ForCausalLM")) for n in names) else "translation"
