"""The Python API: ``attnkit.load(path_or_name)`` returns a translator or a classifier.

``backend``: "auto" (default) runs a model's ONNX export with the torch-free runtime when it has one and
the device is the CPU, else the torch checkpoint; "onnx" requires an export; "torch" the checkpoint.
Both backends return the same result objects (``attnkit.results``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import UsageError
from .pretrained import find_export, resolve

BACKENDS = ("auto", "onnx", "torch")


def _shipped_name(path_or_name: str | Path | None, task: str) -> bool:
    from .pretrained import DEFAULTS, shipped

    return str(path_or_name if path_or_name is not None else DEFAULTS[task]) in shipped()


def _installed(path_or_name: str | Path | None, task: str) -> None:
    """A NotFoundError saying how to fetch a shipped model that this install does not hold yet."""
    from . import store
    from .pretrained import DEFAULTS

    name = str(path_or_name if path_or_name is not None else DEFAULTS[task])
    if name in store.names("pretrained") and not Path(name).exists():
        store.folder("pretrained", name)


def runtime_int8(path_or_name: str | Path | None, task: str = "translation") -> bool:
    """Whether a model's ONNX export has only int8 graphs (the shipped Transformers): then the runtime
    path is ``int8=True``, and without it the checkpoint runs on torch."""
    folder = find_export(path_or_name, task)
    if folder is None:
        return False
    from .runtime import read_manifest

    graphs = read_manifest(folder, verify=False).graphs
    return "int8" in graphs and "fp32" not in graphs


def _export(path_or_name: str | Path | None, task: str, backend: str, int8: bool, device: str) -> Path | None:
    """The export folder to run, or None for torch; errors name what is missing."""
    if backend not in BACKENDS:
        raise UsageError(f"unknown backend {backend!r}; valid: {', '.join(BACKENDS)}")
    _installed(path_or_name, task)
    if backend == "torch":
        return None
    folder = find_export(path_or_name, task)
    if backend == "auto":
        if folder is None or device != "cpu":
            return None
        from .runtime import read_manifest

        if ("int8" if int8 else "fp32") in read_manifest(folder, verify=False).graphs:
            return folder
        # a shipped model's export without this variant: its checkpoint runs on torch; an export folder
        # given by path has no checkpoint, and the runtime's error names the variants it has
        return None if _shipped_name(path_or_name, task) else folder
    if device != "cpu":
        raise UsageError("--backend onnx runs on the CPU only; use --device cpu (or --backend torch)")
    if folder is None:
        name = path_or_name or "the default model"
        raise UsageError(f"{name} has no ONNX export; make one with `attnkit export {name} --out DIR`")
    return folder


def _hugging_face(path_or_name: str | Path | None, backend: str, int8: bool) -> bool:
    """Whether ``path_or_name`` is a Hugging Face model folder or Hub id (``attnkit.hf``), checked
    against the options that cannot apply to one."""
    from .hf import is_hf_reference

    if not is_hf_reference(path_or_name):
        return False
    if backend == "onnx" or int8:
        raise UsageError(
            f"{path_or_name}: a Hugging Face model runs on torch (--backend auto or torch, no --int8)"
        )
    return True


def load(
    path_or_name: str | Path | None = None,
    task: str = "translation",
    int8: bool = False,
    backend: str = "auto",
) -> Any:
    """Load a checkpoint, an export folder, a shipped model by name or a Hugging Face model folder; it says
    whether it translates, classifies or captions. ``int8``: int8 weights (torch dynamic quantization, or the
    export's int8 graphs)."""
    if _hugging_face(path_or_name, backend, int8):
        from .hf import hf_task, load_hf

        return load_hf(str(path_or_name), hf_task(str(path_or_name)))
    folder = _export(path_or_name, task, backend, int8, "cpu")
    if folder is not None:
        from .runtime import load_export

        return load_export(folder, int8=int8)
    from .checkpoint import load_checkpoint

    path = resolve(path_or_name, task)
    task = load_checkpoint(path).task
    if task == "classification":
        from .classifier import Classifier

        return Classifier.from_checkpoint(path, int8=int8)
    if task == "captioning":
        from .captioner import Captioner

        return Captioner.from_checkpoint(path)
    from .translator import Translator

    return Translator.from_checkpoint(path, int8=int8)


def load_translator(
    path_or_name: str | Path | None = None,
    int8: bool = False,
    device: str = "cpu",
    backend: str = "auto",
    rerank: bool | str | None = None,
    channel_weight: float = 1.0,
    length_weight: float = 0.0,
) -> Any:
    """``device``: cpu, cuda, cuda:N or auto (CUDA when present); ``backend``: auto, onnx or torch.
    ``path_or_name`` may also be a Hugging Face encoder-decoder folder or Hub id (``attnkit.hf``).
    ``rerank``: True reranks every n-best list with the shipped channel model and weights of a shipped
    translator (``rerank.SHIPPED``); a name or path: that target -> source model as the channel, with
    ``channel_weight`` and ``length_weight`` (``rerank.NoisyChannel``); None (default): as the default
    configuration does when no model is named (``pretrained.DEFAULT_RERANK``), else no reranking.
    A shipped model whose export is int8 only runs that export on the CPU (``auto``)."""
    from .pretrained import DEFAULT_RERANK

    if rerank is None:
        rerank = DEFAULT_RERANK and path_or_name is None
    translator = _load_translator(path_or_name, int8, device, backend)
    if rerank is not False and type(translator).__module__.startswith("attnkit.hf"):
        raise UsageError(
            "reranking applies to attnkit's translators: a Hugging Face model's beam follows generate()'s "
            "length penalty, so its n-best scores are not log-probabilities"
        )
    if rerank is not False:
        from .pretrained import DEFAULTS
        from .rerank import NoisyChannel, shipped_channel

        if rerank is True:
            name = str(path_or_name) if path_or_name is not None else DEFAULTS["translation"]
            translator.reranker = shipped_channel(name, lambda n: _load_translator(n, int8, device, backend))
        else:
            channel = _load_translator(rerank, int8, device, backend)
            translator.reranker = NoisyChannel(channel, channel_weight, length_weight)
    return translator


def _load_translator(path_or_name: str | Path | None, int8: bool, device: str, backend: str) -> Any:
    if backend == "auto" and device == "cpu" and not int8 and _shipped_name(path_or_name, "translation"):
        int8 = runtime_int8(path_or_name)  # the shipped Transformers' runtime: their int8-only export
    if _hugging_face(path_or_name, backend, int8):
        from .hf import hf_task, load_hf

        task = hf_task(str(path_or_name))  # a decoder-only LM "translates" by continuing its prompt
        return load_hf(str(path_or_name), "generation" if task == "generation" else "translation", device)
    folder = _export(path_or_name, "translation", backend, int8, device)
    if folder is not None:
        from .runtime.seq2seq import OnnxTranslator

        return OnnxTranslator.from_export(folder, int8=int8)
    from .translator import Translator

    return Translator.from_checkpoint(resolve(path_or_name, "translation"), int8=int8, device=device)


def load_classifier(
    path_or_name: str | Path | None = None,
    prior_correction: float | None = None,
    device: str = "cpu",
    backend: str = "auto",
    int8: bool = False,
) -> Any:
    """A HAN classifier (or a Hugging Face sequence classifier folder); ``prior_correction``: tau in
    [0, 1] (None = the model's own setting)."""
    if _hugging_face(path_or_name, backend, int8):
        from .hf import load_hf

        if prior_correction:
            raise UsageError(f"{path_or_name}: prior correction needs a HAN's training class weights")
        return load_hf(str(path_or_name), "classification", device)
    folder = _export(path_or_name, "classification", backend, int8, device)
    if folder is not None:
        from .runtime.han import OnnxClassifier

        return OnnxClassifier.from_export(folder, int8=int8, prior_correction=prior_correction)
    from .classifier import Classifier

    path = resolve(path_or_name, "classification")
    return Classifier.from_checkpoint(path, int8=int8, prior_correction=prior_correction, device=device)


def load_captioner(path_or_name: str | Path | None = None, device: str = "cpu", backend: str = "auto") -> Any:
    """A captioner (``models.captioner``): a checkpoint, an export folder or a shipped name (default:
    ``digits-captioner``); its ONNX export runs without torch."""
    folder = _export(path_or_name, "captioning", backend, False, device)
    if folder is not None:
        from .runtime.captioner import OnnxCaptioner

        return OnnxCaptioner.from_export(folder)
    from .captioner import Captioner

    return Captioner.from_checkpoint(resolve(path_or_name, "captioning"), device=device)


def train(config: Any, resume: bool = False, overwrite: bool = False) -> str:
    """Train an ``ExperimentConfig`` (``attnkit.config.load_config``); see ``attnkit.training.run.train``.
    An ``out_dir`` that holds a run needs ``resume`` (continue it) or ``overwrite`` (replace it)."""
    from .training.run import train as run_training

    return run_training(config, resume=resume, overwrite=overwrite)
