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


def _task_of(path_or_name: str | Path | None, task: str) -> str:
    """The task of a shipped name (its record), else ``task`` (a path says its own task when loaded)."""
    from .pretrained import record

    found = record(str(path_or_name)) if path_or_name is not None else None
    return found.task if found is not None else task if path_or_name is None else ""


def load(
    path_or_name: str | Path | None = None,
    task: str = "translation",
    int8: bool = False,
    backend: str = "auto",
) -> Any:
    """Load a checkpoint, an export folder, a shipped model by name or a Hugging Face model folder; it says
    whether it translates, classifies or captions. ``int8``: int8 weights (torch dynamic quantization, or the
    export's int8 graphs). A shipped translator (and the default, ``attnkit.load()``) loads as the CLI runs
    it: on its runtime, reranking with its channel model where its record names one."""
    if _hugging_face(path_or_name, backend, int8):
        from .hf import hf_task, load_hf

        return load_hf(str(path_or_name), hf_task(str(path_or_name)))
    if _task_of(path_or_name, task) == "translation":
        return load_translator(path_or_name, int8=int8, backend=backend)  # what the CLI runs
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
    translator (its ``pretrained.records`` entry); a name or path: that target -> source model as the
    channel, with ``channel_weight`` and ``length_weight`` (``rerank.NoisyChannel``); None (default): as
    the record says (every shipped translator with a channel model reranks), else no reranking.
    A shipped model whose export is int8 only runs that export on the CPU (``auto``)."""
    from .pretrained import DEFAULTS, record

    name = str(path_or_name) if path_or_name is not None else DEFAULTS["translation"]
    shipped_record = record(name)
    if rerank is None:
        rerank = shipped_record is not None and shipped_record.channel is not None
    translator = _load_translator(path_or_name, int8, device, backend)
    if rerank is False:
        return translator
    if not getattr(translator, "can_rerank", False):
        raise UsageError(
            f"{name}: reranking applies to attnkit's translators: a Hugging Face model's beam follows "
            "generate()'s length penalty, so its n-best scores are not log-probabilities"
        )
    from .rerank import NoisyChannel

    if rerank is True:
        from .pretrained import channel_of

        shipped_channel = channel_of(name)
        rerank, channel_weight, length_weight = (
            shipped_channel.model,
            shipped_channel.channel_weight,
            shipped_channel.length_weight,
        )
    channel = _load_translator(rerank, int8 and _has_int8(rerank), device, backend)
    check_channel(translator, channel, name, str(rerank))
    translator.reranker = NoisyChannel(channel, channel_weight, length_weight)
    return translator


def _has_int8(path_or_name: str | Path) -> bool:
    """Whether a model has int8 ONNX graphs (a channel model runs them with ``--int8``, else fp32 on the
    runtime rather than torch's dynamic int8)."""
    folder = find_export(path_or_name, "translation")
    if folder is None:
        return not _shipped_name(path_or_name, "translation")  # a checkpoint path: torch's int8
    from .runtime import read_manifest

    return "int8" in read_manifest(folder, verify=False).graphs


def language_pair(translator: Any) -> tuple[str, str] | None:
    """(source, target) languages of a translator trained on a shipped dataset; None when unknown."""
    from .datasets import PARALLEL

    config = getattr(translator, "config", None)
    if config is not None and hasattr(config, "data"):
        data = vars(config.data)
    elif hasattr(translator, "manifest"):  # an ONNX export keeps its recipe in the manifest
        data = translator.manifest.meta.get("config", {}).get("data", {})
    else:
        return None
    entry = None if data.get("train") else PARALLEL.get(str(data.get("dataset")))
    return (entry[1], entry[2]) if entry else None


def check_channel(
    translator: Any, channel: Any, name: str, channel_name: str, role: str = "channel model"
) -> None:
    """A channel (or reverse) model must translate target -> source: one line naming both directions."""
    if not hasattr(channel, "log_probs"):
        raise UsageError(
            f"{channel_name} cannot be the {role}: it is {describe(channel)}, not a translator "
            "(it scores no target -> source pairs)"
        )
    ahead, back = language_pair(translator), language_pair(channel)
    if ahead and back and back != (ahead[1], ahead[0]):
        raise UsageError(
            f"{channel_name} translates {back[0]}->{back[1]}; {name} translates {ahead[0]}->{ahead[1]}, so "
            f"the {role} must translate {ahead[1]}->{ahead[0]}"
        )


def describe(model: Any) -> str:
    """What a loaded model is, with its article, for messages ("a Hugging Face causal language model")."""
    from .tasks import with_article

    return with_article(str(getattr(model, "description", type(model).__name__)))


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
