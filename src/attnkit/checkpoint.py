"""Safe, atomic checkpoints: one typed format, read and written here and nowhere else.

A checkpoint file is a ``torch.save`` zip of plain data only: tensors, str, bytes, int, float, bool,
None, lists, tuples and dicts. It is read with ``torch.load(weights_only=True)``, whose unpickler
refuses every other object, so loading a file never runs code from it. Files are written to a
temporary name and renamed, so a crash or Ctrl-C never leaves half a file.

Fields (the ``Checkpoint`` dataclass, their one list): ``config`` (the resolved ExperimentConfig as a
dict), ``model`` (state dict), ``tokenizer``/``target_tokenizer`` (sentencepiece model bytes),
``target_ids``, ``vocabulary``/``labels``/``class_weights``/``prior_correction`` (classifiers),
``ensemble`` (member model configs), ``provenance`` (version, step, hardware, data), and for resuming a
run ``training`` state (optimizer, schedule, RNG, data position). Files from before format 2 are refused
with a message naming ``attnkit convert``.
"""

from __future__ import annotations

import copy
import gc
import os
import pickle
import re
import sys
import types
import typing
import warnings
import zipfile
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch

from .config import ConfigError, ExperimentConfig, from_dict, to_dict, upgrade
from .errors import CheckpointError
from .files import atomic_write_bytes, atomic_write_json, atomic_write_text
from .names import TASKS

FORMAT = "attnkit-checkpoint"
FORMAT_VERSION = 2
_STEP = re.compile(r"step-(\d+)\.pt$")


__all__ = ["atomic_write_bytes", "atomic_write_json", "atomic_write_text"]  # re-exported


# -- atomic writes ------------------------------------------------------------------------------
def atomic_torch_save(obj: Any, path: Path) -> None:
    """``torch.save`` to a temporary file, then rename: plain data only (see the module docstring).
    The path as ``files.write_target`` checks it (a link written through; a folder or device refused)."""
    from .files import write_target

    given = Path(path)
    path = write_target(given)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        torch.save(obj, tmp)
        os.replace(tmp, path)
    except OSError as e:  # name the user's path, not the hidden temporary file
        raise type(e)(e.errno, e.strerror, str(given)) from None
    finally:
        if tmp.exists():
            tmp.unlink()


# -- writing ------------------------------------------------------------------------------------
def stamp(payload: Checkpoint | dict[str, Any]) -> dict[str, Any]:
    """``payload`` with the format marker and version that ``load_checkpoint`` requires."""
    plain = payload.to_payload() if isinstance(payload, Checkpoint) else payload
    return {**plain, "format": FORMAT, "format_version": FORMAT_VERSION}


def save_payload(payload: Checkpoint | dict[str, Any], path: str | Path) -> Path:
    """Write one checkpoint atomically (format marker added), its fields checked first (an unknown
    or mistyped field is a CheckpointError before anything is written). Returns the path."""
    path = Path(path)
    checked = payload if isinstance(payload, Checkpoint) else Checkpoint.from_payload(payload, path)
    atomic_torch_save(stamp(checked), path)
    return path


def step_checkpoints(out_dir: Path) -> list[Path]:
    """Checkpoints ``step-N.pt`` in ``out_dir``, oldest first."""
    found = [(int(m.group(1)), p) for p in out_dir.glob("step-*.pt") if (m := _STEP.search(p.name))]
    return [p for _, p in sorted(found)]


def save_checkpoint(
    out_dir: Path, payload: Checkpoint | dict[str, Any], keep_last: int, is_best: bool
) -> Path:
    """Write ``step-N.pt`` (and ``best.pt`` when best) atomically; keep the last ``keep_last``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    checked = payload if isinstance(payload, Checkpoint) else Checkpoint.from_payload(payload, out_dir)
    path = save_payload(checked, out_dir / f"step-{checked.step}.pt")
    if is_best:
        tmp = out_dir / f".best.pt.link{os.getpid()}"
        if tmp.exists():
            tmp.unlink()
        os.link(path, tmp)
        os.replace(tmp, out_dir / "best.pt")
    for old in step_checkpoints(out_dir)[: -max(keep_last, 1)]:
        old.unlink()
    return path


def latest_checkpoint(out_dir: Path) -> Path | None:
    found = step_checkpoints(out_dir)
    return found[-1] if found else None


@dataclass
class Checkpoint:
    """One checkpoint, typed: the only list of its fields. ``load_checkpoint`` returns one, checked
    field by field (a wrong field is named in a ``CheckpointError``); ``save_payload`` writes one (or a
    dict of its fields). Its config is the typed ``ExperimentConfig`` (stored as ``config.to_dict``);
    fields are attributes, None when not set."""

    config: ExperimentConfig  # the resolved config of the run
    model: dict[str, torch.Tensor]  # state dict (fp32, or fp16 for shipped models)
    step: int = 0
    attnkit_version: str = ""
    tokenizer: bytes | None = None  # sentencepiece model (translation; joint or source side)
    target_tokenizer: bytes | None = None  # separate target-side model (data.vocabulary separate)
    target_ids: list[int] | None = None  # the target-side pieces of a joint vocabulary (TiedOutput)
    vocabulary: list[str] | None = None  # classifiers: words, id = index
    labels: list[str] | None = None
    # the training loss's class weights (prior correction divides them out); [] = trained unweighted,
    # None = not kept (a checkpoint from before they were kept)
    class_weights: list[float] | None = None
    prior_correction: float | None = None  # tau of ``training.prior`` kept with a shipped classifier
    ensemble: list[ExperimentConfig] | None = None  # each member's config (``attnkit ensemble``)
    ensemble_of: list[str] | None = None
    averaged_from: list[str] | None = None
    provenance: dict[str, Any] | None = None  # version, hardware, data of the run
    position: dict[str, Any] | None = None  # the run's position and validation history
    tokens_seen: int | None = None
    train_time: float | None = None
    optimizer: dict[str, Any] | None = None  # resume state: not kept by inference_payload
    schedule: dict[str, Any] | None = None
    rng: dict[str, Any] | None = None

    @classmethod
    def from_payload(cls, payload: dict[str, Any], path: str | Path = "checkpoint") -> Checkpoint:
        """Type-check every field; unknown fields and wrong types are CheckpointErrors naming them."""
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(payload) - set(known) - {"format", "format_version"})
        if unknown:
            raise CheckpointError(f"{path}: unknown field {unknown[0]!r}; valid: {', '.join(known)}")
        for name, value in payload.items():
            expected = _FIELD_TYPES.get(name)
            if expected and value is not None and not isinstance(value, expected):
                raise CheckpointError(
                    f"{path}: field {name!r} must be {_type_name(expected)}, got {type(value).__name__}"
                )
        values = {k: v for k, v in payload.items() if k in known}
        if "class_weights" in payload and payload["class_weights"] is None:
            values["class_weights"] = []  # stored as None by unweighted runs
        if values.get("ensemble") is not None:
            members = enumerate(_members(values["ensemble"], values.get("config")))
            values["ensemble"] = [_typed(ExperimentConfig, m, path, f"ensemble[{i}]") for i, m in members]
        values["config"] = _typed(ExperimentConfig, values.get("config"), path, "config")
        return cls(**values)

    def to_payload(self) -> dict[str, Any]:
        """The fields that are set, as the plain dict that is stored (configs as plain dicts)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}
        out["config"] = to_dict(self.config)
        if self.ensemble is not None:
            out["ensemble"] = [to_dict(m) for m in self.ensemble]
        return out

    @property
    def task(self) -> str:
        return self.config.task

    def history(self) -> list[Any]:
        """The run's validation history (``position.history``), [] when not kept."""
        return list((self.position or {}).get("history", []))


def _members(members: list[Any], config: Any) -> list[Any]:
    """An ensemble's member configs. Before 0.2 a member kept its model config only: it becomes the
    ensemble's config with that model (its training-only options, such as its class weighting, move to
    ``training`` on the way)."""
    if not isinstance(config, dict):
        return members
    old = [isinstance(m, dict) and "name" in m and "model" not in m for m in members]
    return [{**copy.deepcopy(config), "model": m} if was_old else m for m, was_old in zip(members, old)]


def _typed(cls: type[Any], value: Any, path: str | Path, name: str) -> Any:
    """A stored config mapping -> its dataclass (already typed: as is); a bad key names the field. A
    mapping written by an older attnkit is brought up to date first (``config.upgrade``)."""
    if value is None or isinstance(value, cls):
        return value
    try:
        if isinstance(value, dict):
            value = copy.deepcopy(value)
            upgrade(value, stored=True)
        return from_dict(cls, value)
    except ConfigError as exc:
        raise CheckpointError(f"{path}: field {name!r}: {exc}") from None


def _field_types() -> dict[str, tuple[type, ...]]:
    """The stored type of each ``Checkpoint`` field, read from its annotation (``X | None`` -> X;
    ``dict[...]`` -> dict; a float field also takes an int)."""
    out = {}
    for name, hint in typing.get_type_hints(Checkpoint).items():
        union = typing.get_origin(hint) in (typing.Union, types.UnionType)
        kinds = [typing.get_origin(a) or a for a in (typing.get_args(hint) if union else (hint,))]
        kinds = [k for k in kinds if k is not type(None)]
        out[name] = tuple(kinds) + ((int,) if float in kinds else ())
    out["config"] = (dict, ExperimentConfig)  # stored as a mapping, typed once read
    return out


_FIELD_TYPES = _field_types()
_FIELD_NAMES = frozenset(_FIELD_TYPES)
TRAINING_STATE = ("optimizer", "schedule", "rng")
INFERENCE_FIELDS = tuple(n for n in _FIELD_TYPES if n not in TRAINING_STATE and n != "model")


def _type_name(expected: tuple[type, ...]) -> str:
    return " or ".join(k.__name__ for k in expected)


def inference_payload(payload: Checkpoint | dict[str, Any], fp16: bool = True) -> dict[str, Any]:
    """What inference needs (no optimizer or RNG state), float weights in fp16 when ``fp16``.
    Tied weights (one storage under two names) stay one storage."""
    ckpt = payload if isinstance(payload, Checkpoint) else Checkpoint.from_payload(payload)
    stored = ckpt.to_payload()
    small = {k: stored[k] for k in INFERENCE_FIELDS if k in stored}
    halves: dict[int, torch.Tensor] = {}
    small["model"] = {
        k: halves.setdefault(v.data_ptr(), v.half() if fp16 else v) if v.is_floating_point() else v
        for k, v in ckpt.model.items()
    }
    small["position"] = {"history": ckpt.history()}
    return small


# -- reading ------------------------------------------------------------------------------------
def _read_safely(path: Path) -> Any:
    if not zipfile.is_zipfile(path):  # every checkpoint is a torch.save zip; a bare pickle is never read
        raise CheckpointError(f"{path}: not an attnkit checkpoint (not a torch.save zip archive)")
    try:
        with warnings.catch_warnings():  # torch's note on a pickle protocol it did not write
            warnings.filterwarnings("ignore", message="Detected pickle protocol")
            return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        raise CheckpointError(_refusal(path, str(exc))) from None
    except (RuntimeError, EOFError, zipfile.BadZipFile, OSError, ValueError, KeyError) as exc:
        reason = str(exc).strip().splitlines()[0][:120] if str(exc).strip() else type(exc).__name__
        raise CheckpointError(f"{path}: not an attnkit checkpoint (unreadable: {reason})") from None


# Modules whose functions a pickle calls to run commands or code: such a file is an attack, not an old
# checkpoint, and ``convert --trust-pickle`` is never suggested for it.
_HOSTILE = {"builtins", "code", "ctypes", "importlib", "nt", "os", "posix", "pty", "runpy", "shutil"}
_HOSTILE |= {"socket", "subprocess", "sys", "webbrowser", "pickle", "marshal", "types", "operator"}


def _refusal(path: Path, error: str) -> str:
    """The message for a file torch's weights-only reader refused, naming the global it would call."""
    found = re.search(r"GLOBAL ([\w.]+)", error, re.IGNORECASE)
    name = found.group(1) if found else ""
    if name.split(".")[0] in _HOSTILE:
        return (
            f"{path}: refused: loading it would call {name}, which runs commands or code; it is not an "
            "attnkit checkpoint and should not be trusted"
        )
    what = f" ({name})" if name else ""
    return (
        f"{path}: refused: the file holds Python objects{what} that loading would have to run; attnkit "
        "checkpoints hold plain data only. If it is a checkpoint of an earlier attnkit and you trust "
        f"where it came from: attnkit convert {path} NEW.pt --trust-pickle"
    )


def check_payload(payload: Any, path: str | Path, task: str | None = None) -> Checkpoint:
    """Check the fields every checkpoint needs, naming the first one that is wrong."""
    if not isinstance(payload, dict):
        raise CheckpointError(f"{path}: not an attnkit checkpoint (it holds a {type(payload).__name__})")
    if payload.get("format") != FORMAT:
        if "config" in payload and "model" in payload:
            raise CheckpointError(
                f"{path}: a checkpoint of an earlier attnkit (format 1); convert it once: "
                f"attnkit convert {path} NEW.pt"
            )
        raise CheckpointError(f"{path}: not an attnkit checkpoint (no 'format' field)")
    version = payload.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise CheckpointError(
            f"{path}: checkpoint format {version!r} is newer than this attnkit reads ({FORMAT_VERSION})"
        )
    config, model = payload.get("config"), payload.get("model")
    if not isinstance(config, dict) or config.get("task") not in TASKS:
        raise CheckpointError(f"{path}: field 'config' must be a mapping with task in {', '.join(TASKS)}")
    if not isinstance(model, dict) or not all(isinstance(v, torch.Tensor) for v in model.values()):
        raise CheckpointError(f"{path}: field 'model' must map parameter names to tensors")
    if config["task"] == "translation" and not isinstance(payload.get("tokenizer"), bytes):
        raise CheckpointError(f"{path}: field 'tokenizer' (sentencepiece model bytes) is missing")
    if config["task"] in ("classification", "captioning") and not isinstance(payload.get("vocabulary"), list):
        raise CheckpointError(f"{path}: field 'vocabulary' (list of words) is missing")
    if task is not None and config["task"] != task:
        raise CheckpointError(f"{path} is a {config['task']} model, not a {task} model")
    return Checkpoint.from_payload(payload, path)


def load_checkpoint(path: str | Path, task: str | None = None) -> Checkpoint:
    """Read and check a checkpoint; never runs code from the file. ``task``: require that task."""
    path = Path(path)
    _check_exists(path)
    return check_payload(_read_safely(path), path, task)


def _check_exists(path: Path) -> None:
    if not path.is_file():
        raise CheckpointError(
            f"checkpoint {path} {'is a folder, not a file' if path.is_dir() else 'does not exist'}"
        )


# what torch.load raises on bytes that are not a checkpoint (random bytes reach the unpickler's tables)
UNREADABLE = (
    RuntimeError,
    EOFError,
    zipfile.BadZipFile,
    OSError,
    ValueError,
    KeyError,
    IndexError,
    TypeError,
)


def _trusted_load(src: Path) -> Any:
    """``torch.load`` with arbitrary objects allowed, any failure one line (random bytes can leave half-built
    objects whose cleanup CPython reports as a traceback through ``sys.unraisablehook``: dropped here)."""
    hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: None
    try:
        with warnings.catch_warnings():  # torch's notes on odd pickle protocols: the error line says enough
            warnings.simplefilter("ignore")
            return torch.load(src, map_location="cpu", weights_only=False)
    except Exception as exc:  # noqa: BLE001 - arbitrary bytes unpickled: any failure means unreadable
        reason = str(exc).strip().splitlines()[0][:120] if str(exc).strip() else type(exc).__name__
        raise CheckpointError(f"{src}: not an attnkit checkpoint (unreadable: {reason})") from None
    finally:
        gc.collect()  # the half-built objects go now, while their reports are dropped
        sys.unraisablehook = hook


def convert_legacy(src: str | Path, dst: str | Path, trust_pickle: bool = False) -> Checkpoint:
    """Rewrite an earlier attnkit checkpoint in format 2. Unpickling arbitrary objects happens only
    with ``trust_pickle`` (a warning says so); the result is checked before it is written."""
    src = Path(src)
    _check_exists(src)
    if src.stat().st_size == 0:
        raise CheckpointError(f"{src}: not an attnkit checkpoint (an empty file)")
    try:
        with warnings.catch_warnings():  # torch's note on a pickle protocol it did not write
            warnings.filterwarnings("ignore", message="Detected pickle protocol")
            payload = torch.load(src, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        if not trust_pickle:
            _read_safely(src)  # raises the message that names --trust-pickle
        warnings.warn(f"{src}: unpickling with arbitrary objects allowed (--trust-pickle)", stacklevel=2)
        payload = _trusted_load(src)
    except UNREADABLE as exc:
        raise CheckpointError(f"{src}: not an attnkit checkpoint (unreadable: {exc})") from None
    if not isinstance(payload, dict):
        raise CheckpointError(f"{src}: not an attnkit checkpoint (it holds a {type(payload).__name__})")
    payload = dict(payload)
    if isinstance(payload.get("rng", {}).get("numpy"), tuple):
        kind, keys, *rest = payload["rng"]["numpy"]
        payload["rng"] = {**payload["rng"], "numpy": [kind, torch.from_numpy(keys.astype(np.int64)), *rest]}
    checked = check_payload(stamp({k: v for k, v in payload.items() if k in _FIELD_NAMES}), src)
    atomic_torch_save(stamp(checked), Path(dst))
    return checked
