"""Loading Hugging Face folders and Hub ids safely: never remote code, one line for whatever cannot be
loaded (missing tokenizer files, a config that is not a JSON object, weights that do not fit it, a head
that would be initialized at random, a Hub that cannot be reached)."""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import UsageError


def model_folder(path_or_name: str | Path) -> str:
    """The folder or Hub id to hand to ``from_pretrained``, checked: no remote code is ever run."""
    text = str(path_or_name)
    path = Path(text)
    if path.is_dir():
        config = read_config(path)
        if config.get("auto_map"):
            raise UsageError(
                f"{path}: this model needs its own Python code (auto_map in config.json); attnkit never "
                "runs code from a model folder"
            )
    return text


TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.json",
    "vocab.txt",
    "source.spm",
    "spiece.model",
    "sentencepiece.bpe.model",
    "sentencepiece.model",
    "tokenizer.model",
)
# the Auto class -> what its config.json's architectures must name (else transformers would initialize
# that head at random and answer with it)
HEADS = {"AutoModelForSequenceClassification": "ForSequenceClassification"}


def check_folder(reference: str, auto: str) -> None:
    """A local folder has a tokenizer and the head ``auto`` loads (else transformers would initialize one
    at random): one line naming what is missing."""
    path = Path(reference)
    if not path.is_dir():
        return
    if not any((path / name).is_file() for name in TOKENIZER_FILES):
        raise UsageError(
            f"{path}: no tokenizer files (one of {', '.join(TOKENIZER_FILES[:3])}, ...); save the tokenizer "
            "beside the model (tokenizer.save_pretrained(folder))"
        )
    if not any(path.glob("*.safetensors")) and any(path.glob("*.bin")):
        raise UsageError(
            f"{path}: its weights are pickled .bin files, which can run code when loaded: refused (as "
            "checkpoints are); save them as safetensors (model.save_pretrained(folder))"
        )
    names = read_config(path).get("architectures") or []
    head = HEADS.get(auto)
    if head and not any(str(n).endswith(head) for n in names):
        raise UsageError(
            f"{path}: its model is {', '.join(map(str, names)) or 'of no named architecture'}, which has no "
            f"trained classification head (config.json architectures: no *{head}); classify needs one"
        )


def read_config(path: Path) -> dict[str, Any]:
    """A folder's config.json as a mapping; one line when it is not JSON or not an object."""
    where = path / "config.json"
    try:
        found = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UsageError(f"{where}: not a JSON file ({e})") from None
    if not isinstance(found, dict):
        raise UsageError(f"{where}: expected a JSON object, got a {type(found).__name__}")
    return found


def reachable(host: str = "huggingface.co", timeout: float = 3.0) -> bool:
    """Whether the Hub answers at all (one TCP connection), so an offline machine gets its one-line
    hint at once instead of after the Hub client's retries."""
    import socket

    if os.environ.get("HF_HUB_OFFLINE"):
        return False
    try:
        with socket.create_connection((host, 443), timeout=timeout):
            return True
    except OSError:
        return False


def offline_hint(reference: str, error: Exception | None = None) -> UsageError:
    """A Hub id that could not be loaded: one line saying how to use a local folder instead."""
    if Path(reference).exists():
        return UsageError(
            f"{reference}: not a Hugging Face model folder ({str(error).splitlines()[0][:160]})"
        )
    where = "HF_HUB_OFFLINE is set" if os.environ.get("HF_HUB_OFFLINE") else "the Hub cannot be reached"
    return UsageError(
        f"{reference}: no such folder, and as a Hugging Face Hub id {where}; download it where there is "
        f"network (huggingface-cli download {reference} --local-dir DIR) and pass --model DIR"
    )


@contextlib.contextmanager
def quiet_loading() -> Iterator[None]:
    """transformers' weight-loading progress bar off while loading (attnkit's own progress rules apply),
    and Marian's advice to install sacremoses (which attnkit does not use) unsaid."""
    from transformers.utils import logging as hf_logging

    shown = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*sacremoses")
            yield
    finally:
        if shown:
            hf_logging.enable_progress_bar()


def pretrained(auto: Any, reference: str, **kwargs: Any) -> Any:
    """``auto.from_pretrained`` without remote code: a folder as is; a Hub id from the local cache, else
    from the Hub when it can be reached; anything else is one line saying what to do."""
    local = Path(reference).is_dir()
    try:
        return auto.from_pretrained(reference, trust_remote_code=False, local_files_only=True, **kwargs)
    except (OSError, ValueError) as e:
        if local or not reachable():
            raise offline_hint(reference, e) from None
    try:
        return auto.from_pretrained(reference, trust_remote_code=False, **kwargs)
    except (OSError, ValueError) as e:
        raise offline_hint(reference, e) from None


def load_model(auto: str, path_or_name: str | Path, device: str = "cpu") -> tuple[Any, Any, str]:
    """(model, tokenizer, reference) of a folder or Hub id through ``transformers.<auto>`` (an Auto class
    name), with eager attention (fused kernels return no weights), on ``device``."""
    import transformers

    from ..device import resolve_device

    reference = model_folder(path_or_name)
    check_folder(reference, auto)
    with quiet_loading():
        try:
            tokenizer = pretrained(transformers.AutoTokenizer, reference)
        except (TypeError, KeyError, AttributeError) as e:  # a tokenizer class given files it cannot read
            raise UsageError(
                f"{reference}: its tokenizer files cannot be read ({type(e).__name__}: {e})"
            ) from None
        try:
            model = pretrained(
                getattr(transformers, auto), reference, attn_implementation="eager", use_safetensors=True
            )
        except RuntimeError as e:  # weights whose shapes do not fit config.json
            if "size" not in str(e) and "shape" not in str(e):
                raise
            raise UsageError(f"{reference}: its weights do not fit its config.json (shapes differ)") from None
        except Exception as e:  # safetensors' own error for a truncated or corrupt file
            if type(e).__name__ not in ("SafetensorError", "HeaderTooLarge", "HeaderTooSmall"):
                raise
            raise UsageError(f"{reference}: its safetensors weights cannot be read ({e})") from None
    return model.to(resolve_device(device)), tokenizer, reference
