"""A model reference resolved once, and the class that serves it read off the task x backend table.

``resolve_reference`` turns what a user gives (a shipped name, a checkpoint file, an ONNX export folder, a
Hugging Face folder or Hub id, or nothing: the default of the task) into a ``Reference``: the task, the
backend that runs it (torch, onnx or hf), where its files are, and whether its int8 variant runs.
``instantiate`` builds the class ``tasks.TABLE[task].backends[backend]``. The Python API (``api``), the CLI
and the server load every model through these two, so a new backend is one column of the table.

Backend "auto" (default) runs a model's ONNX export with the torch-free runtime when it has one and the
device is the CPU (a shipped Transformer's int8-only export included), else the torch checkpoint; "onnx"
requires an export; "torch" the checkpoint. A Hugging Face model runs on torch (transformers).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import UsageError

BACKENDS = ("auto", "onnx", "torch")


@dataclass(frozen=True)
class Reference:
    """A resolved model reference. ``name``: as the user gave it (or the default's name)."""

    name: str
    task: str
    backend: str  # torch | onnx | hf: a column of ``tasks.TABLE``
    location: str  # checkpoint file, export folder, Hugging Face folder or Hub id
    int8: bool = False


def resolve_reference(
    path_or_name: str | Path | None, task: str, backend: str = "auto", int8: bool = False, device: str = "cpu"
) -> Reference:
    """``path_or_name`` (None: the default model of ``task``) resolved for ``task`` ("" for a path that
    says its own task: a checkpoint's or export's)."""
    from .pretrained import DEFAULTS, record

    if backend not in BACKENDS:
        raise UsageError(f"unknown backend {backend!r}; valid: {', '.join(BACKENDS)}")
    name = str(path_or_name) if path_or_name is not None else DEFAULTS[task or "translation"]
    found = record(name)
    task = found.task if found is not None else task
    if found is not None and task == "generation":  # a shipped Hugging Face folder (the causal LM)
        from . import store

        return Reference(name, task, "hf", str(store.folder("pretrained", name)))
    hf = _hugging_face(path_or_name, backend, int8)
    if hf:  # hf_task says "translation" for any architecture it does not recognise: the classifier's
        # loader names what a folder given to classify lacks
        return Reference(name, task if hf == "translation" and task else hf, "hf", str(path_or_name))
    _installed(name)
    if task == "translation" and backend == "auto" and device == "cpu" and not int8 and found is not None:
        int8 = runtime_int8(name)  # the shipped Transformers' runtime: their int8-only export
    folder = _export(name, task or "translation", backend, int8, device)
    if folder is not None:
        from .runtime import read_manifest

        return Reference(name, read_manifest(folder, verify=False).task, "onnx", str(folder), int8)
    from .pretrained import resolve

    path = resolve(name, task or "translation")
    if not task:
        from .checkpoint import load_checkpoint

        task = load_checkpoint(path).task
    return Reference(name, task, "torch", str(path), int8)


def instantiate(ref: Reference, device: str = "cpu", **options: Any) -> Any:
    """The class of ``ref``'s task and backend (``tasks.TABLE``), loaded. ``options``: what that class's
    loader takes besides the location (``prior_correction`` for classifiers)."""
    from .names import resolve
    from .tasks import TABLE

    row = TABLE.get(ref.task)
    if row is None or ref.backend not in row.backends:
        raise UsageError(f"{ref.name}: a {ref.task} model cannot run on the {ref.backend} backend")
    cls = resolve(row.backends[ref.backend])
    if ref.backend == "hf":
        return cls.from_pretrained(ref.location, device=device)
    variant = {"int8": ref.int8} if ref.task != "captioning" else {}
    if ref.backend == "onnx":
        return cls.from_export(ref.location, **variant, **options)
    return cls.from_checkpoint(ref.location, device=device, **variant, **options)


def load_reference(
    path_or_name: str | Path | None,
    task: str,
    backend: str = "auto",
    int8: bool = False,
    device: str = "cpu",
    **options: Any,
) -> Any:
    """``instantiate(resolve_reference(...))``, checking that the model does the ``task`` asked for."""
    ref = resolve_reference(path_or_name, task, backend, int8, device)
    if task and ref.task != task and not (task == "translation" and ref.task == "generation"):
        raise UsageError(f"{ref.name} is a {ref.task} model, not a {task} model")
    return instantiate(ref, device, **options)


def _hugging_face(path_or_name: str | Path | None, backend: str, int8: bool) -> str:
    """The task of a Hugging Face model folder or Hub id (``attnkit.hf``), checked against the options
    that cannot apply to one; "" for anything else."""
    from .hf import hf_task, is_hf_reference

    if not is_hf_reference(path_or_name):
        return ""
    if backend == "onnx" or int8:
        raise UsageError(
            f"{path_or_name}: a Hugging Face model runs on torch (--backend auto or torch, no --int8)"
        )
    return hf_task(str(path_or_name))


def _installed(name: str) -> None:
    """A NotFoundError saying how to fetch a shipped model that this install does not hold yet."""
    from . import store

    if name in store.names("pretrained") and not Path(name).exists():
        store.folder("pretrained", name)


def _shipped(name: str) -> bool:
    from .pretrained import shipped

    return name in shipped()


def runtime_int8(path_or_name: str | Path | None, task: str = "translation") -> bool:
    """Whether a model's ONNX export has only int8 graphs (the shipped Transformers): then the runtime
    path is ``int8=True``, and without it the checkpoint runs on torch."""
    graphs = export_graphs(path_or_name, task)
    return "int8" in graphs and "fp32" not in graphs


def export_graphs(path_or_name: str | Path | None, task: str = "translation") -> tuple[str, ...]:
    """The variants (fp32, int8) of a model's ONNX export; empty when it has none."""
    from .pretrained import find_export

    folder = find_export(path_or_name, task)
    if folder is None:
        return ()
    from .runtime import read_manifest

    return tuple(read_manifest(folder, verify=False).graphs)


def _export(name: str, task: str, backend: str, int8: bool, device: str) -> Path | None:
    """The export folder to run, or None for torch; errors name what is missing."""
    from .pretrained import find_export

    if backend == "torch":
        return None
    folder = find_export(name, task)
    if backend == "auto":
        if folder is None or device != "cpu":
            return None
        if ("int8" if int8 else "fp32") in export_graphs(name, task):
            return folder
        # a shipped model's export without this variant: its checkpoint runs on torch; an export folder
        # given by path has no checkpoint, and the runtime's error names the variants it has
        return None if _shipped(name) else folder
    if device != "cpu":
        raise UsageError("--backend onnx runs on the CPU only; use --device cpu (or --backend torch)")
    if folder is None:
        raise UsageError(f"{name} has no ONNX export; make one with `attnkit export {name} --out DIR`")
    return folder
