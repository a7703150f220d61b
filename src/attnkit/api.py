"""The Python API: ``attnkit.load(path_or_name)`` returns a translator, a classifier or a captioner.

Every model is resolved once and built from the task x backend table (``loading``); ``backend``: "auto"
(default) runs a model's ONNX export with the torch-free runtime when it has one and the device is the
CPU, else the torch checkpoint; "onnx" requires an export; "torch" the checkpoint. Every backend returns
the same result objects (``attnkit.results``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import UsageError
from .loading import BACKENDS, export_graphs, instantiate, load_reference, resolve_reference, runtime_int8
from .pretrained import record

__all__ = [
    "BACKENDS",
    "load",
    "load_captioner",
    "load_classifier",
    "load_translator",
    "runtime_int8",
    "train",
]


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
    ref = resolve_reference(path_or_name, task if path_or_name is None else "", backend, int8)
    if ref.task == "translation":
        return load_translator(path_or_name, int8=int8, backend=backend)  # what the CLI runs
    return instantiate(ref)


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
    if rerank is False:
        return _load_translator(path_or_name, int8, device, backend)
    from .rerank import NoisyChannel

    if rerank is True:
        from .pretrained import channel_of

        shipped_channel = channel_of(name)
        rerank, channel_weight, length_weight = (
            shipped_channel.model,
            shipped_channel.channel_weight,
            shipped_channel.length_weight,
        )
    NoisyChannel(None, channel_weight, length_weight)  # non-finite weights: one line before any loading
    translator, channel = _load_pair(path_or_name, str(rerank), int8, device, backend)
    if not getattr(translator, "can_rerank", False):
        raise UsageError(
            f"{name}: reranking applies to attnkit's translators: a Hugging Face model's beam follows "
            "generate()'s length penalty, so its n-best scores are not log-probabilities"
        )
    check_channel(translator, channel, name, str(rerank))
    translator.reranker = NoisyChannel(channel, channel_weight, length_weight)
    return translator


def _load_pair(
    path_or_name: str | Path | None, channel: str, int8: bool, device: str, backend: str
) -> tuple[Any, Any]:
    """The translator and its channel model, loaded side by side (graph sessions and tokenizers load in
    parallel threads: the default's start-up is mostly that)."""
    from concurrent.futures import ThreadPoolExecutor

    from .hf import is_hf_reference

    if is_hf_reference(path_or_name) or is_hf_reference(channel):  # transformers sets torch's default
        # device while it loads (meta tensors): another model built meanwhile would get it too
        first = _load_translator(path_or_name, int8, device, backend)
        return first, _load_translator(channel, int8 and has_int8_graphs(channel), device, backend)
    with ThreadPoolExecutor(1) as pool:
        second = pool.submit(_load_translator, channel, int8 and has_int8_graphs(channel), device, backend)
        first = _load_translator(path_or_name, int8, device, backend)
        return first, second.result()


def has_int8_graphs(path_or_name: str | Path) -> bool:
    """Whether a model has int8 ONNX graphs (a channel model runs them with ``--int8``, else fp32 on the
    runtime rather than torch's dynamic int8); a checkpoint path: torch's int8."""
    from .pretrained import find_export

    if find_export(path_or_name, "translation") is None:
        return record(str(path_or_name)) is None
    return "int8" in export_graphs(path_or_name)


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
    return load_reference(path_or_name, "translation", backend, int8, device)


def load_classifier(
    path_or_name: str | Path | None = None,
    prior_correction: float | None = None,
    device: str = "cpu",
    backend: str = "auto",
    int8: bool = False,
) -> Any:
    """A HAN classifier (or a Hugging Face sequence classifier folder); ``prior_correction``: tau in
    [0, 1] (None = the model's own setting)."""
    ref = resolve_reference(path_or_name, "classification", backend, int8, device)
    if ref.task != "classification":
        raise UsageError(f"{ref.name} is a {ref.task} model: classify needs a classifier")
    if ref.backend == "hf":
        if prior_correction:
            raise UsageError(f"{path_or_name}: prior correction needs a HAN's training class weights")
        return instantiate(ref, device)
    return instantiate(ref, device, prior_correction=prior_correction)


def load_captioner(path_or_name: str | Path | None = None, device: str = "cpu", backend: str = "auto") -> Any:
    """A captioner (``models.captioner``): a checkpoint, an export folder or a shipped name (default:
    ``digits-captioner``); its ONNX export runs without torch."""
    return load_reference(path_or_name, "captioning", backend, False, device)


def train(config: Any, resume: bool = False, overwrite: bool = False) -> str:
    """Train an ``ExperimentConfig`` (``attnkit.config.load_config``); see ``attnkit.training.run.train``.
    An ``out_dir`` that holds a run needs ``resume`` (continue it) or ``overwrite`` (replace it)."""
    from .training.run import train as run_training

    return run_training(config, resume=resume, overwrite=overwrite)
