"""The task x backend table, in the spirit of Hugging Face's Auto classes (torch-free, imports nothing).

For each task: what it returns (its one result type), the base that owns its loops, the class of each
backend (attnkit's torch checkpoints, the torch-free ONNX runtime, Hugging Face folders), the exporter and
the trainer, each as "module:attr", imported on first use. Each backend kind declares what it provides
(``PROVIDES``) and each attention map and view what it needs (``NEEDS``): a request whose needs are not
provided is refused in one line naming the map, the model and what it lacks (``missing``). A loaded model
says its kind with ``kind`` (``translator.kind``), so no surface guesses it from module names.

The contract suite (tests/contract) is generated from this table: a backend, option or map that is in it is
tested in every combination.
"""

from __future__ import annotations

from typing import NamedTuple


class Task(NamedTuple):
    result: str
    base: str
    backends: dict[str, str]  # backend -> class
    exporter: str
    trainer: str


TABLE: dict[str, Task] = {
    "translation": Task(
        result="attnkit.results:Translation",
        base="attnkit.translate_base:TranslatorBase",
        backends={
            "torch": "attnkit.translator:Translator",
            "onnx": "attnkit.runtime.seq2seq:OnnxTranslator",
            "hf": "attnkit.hf.seq2seq:HFTranslator",
        },
        exporter="attnkit.export.seq2seq:export_seq2seq",
        trainer="attnkit.training.translation:TranslationTask",
    ),
    "classification": Task(
        result="attnkit.results:Classification",
        base="attnkit.classify_base:ClassifierBase",
        backends={
            "torch": "attnkit.classifier:Classifier",
            "onnx": "attnkit.runtime.han:OnnxClassifier",
            "hf": "attnkit.hf.classify:HFClassifier",
        },
        exporter="attnkit.export.han:export_han",
        trainer="attnkit.training.classification:ClassificationTask",
    ),
    "captioning": Task(
        result="attnkit.caption_base:Caption",
        base="attnkit.caption_base:CaptionerBase",
        backends={
            "torch": "attnkit.captioner:Captioner",
            "onnx": "attnkit.runtime.captioner:OnnxCaptioner",
        },
        exporter="attnkit.export.captioner:export_captioner",
        trainer="attnkit.training.captioning:CaptioningTask",
    ),
    "generation": Task(  # decoder-only language models continue a prompt; no exporter or trainer here
        result="attnkit.hf.causal:Continuation",
        base="attnkit.hf.causal:HFCausalLM",
        backends={"hf": "attnkit.hf.causal:HFCausalLM"},
        exporter="",
        trainer="",
    ),
}

# What a translator of each kind provides: every decoder layer's and head's cross-attention ("layers"),
# encoder and decoder self-attention ("self_attention"), each head's value vectors ("values"), gradients
# through the model ("gradients"), int8 weights ("int8").
PROVIDES: dict[str, frozenset[str]] = {
    "transformer": frozenset({"layers", "self_attention", "values", "gradients", "int8"}),
    "rnn": frozenset({"values", "gradients", "int8"}),
    "onnx-transformer": frozenset({"layers", "int8"}),
    "onnx-rnn": frozenset({"int8"}),
    "hf": frozenset({"layers", "self_attention", "gradients"}),
    "causal": frozenset({"layers", "self_attention"}),
}
DESCRIPTION = {
    "transformer": "attnkit Transformer translator (torch)",
    "rnn": "attnkit RNN translator (torch)",
    "onnx-transformer": "ONNX export of an attnkit Transformer",
    "onnx-rnn": "ONNX export of an attnkit RNN",
    "hf": "Hugging Face encoder-decoder",
    "causal": "Hugging Face causal language model",
}

# What each attention map and view needs (maps: ``explain.attention_maps``; views: the explorer's).
NEEDS: dict[str, frozenset[str]] = {
    "attention": frozenset(),
    "rollout": frozenset({"layers", "self_attention"}),
    "flow": frozenset({"layers", "self_attention"}),
    "norm": frozenset({"values"}),
    "grad": frozenset({"gradients"}),
    "value_zeroing": frozenset({"values"}),
    "layer_view": frozenset({"layers"}),
    "head_view": frozenset({"layers"}),
    "model_view": frozenset({"self_attention"}),
    "heads_report": frozenset({"layers"}),
}
WHY = {
    "layers": "it has one attention layer and head (an RNN)",
    "self_attention": "it returns no self-attention",
    "values": "it returns no value vectors",
    "gradients": "it has no gradients (ONNX graphs)",
    "int8": "it has no int8 weights",
}


def with_article(text: str) -> str:
    """ "an attnkit RNN translator", "a Hugging Face encoder-decoder"."""
    return f"{'an' if text[:1].lower() in 'aeiou' else 'a'} {text}"


def missing(need: str, kind: str) -> list[str]:
    """What ``kind`` lacks of what ``need`` (a map or view) needs; empty when it applies."""
    return sorted(NEEDS[need] - PROVIDES[kind])


def applies(need: str, kind: str) -> bool:
    return need in NEEDS and not missing(need, kind)


def refusal(need: str, kind: str, name: str) -> str:
    """The one line for a map or view that does not apply: the map, the model (named), why, and what
    applies instead."""
    lacks = missing(need, kind)
    valid = ", ".join(m for m in MAPS if applies(m, kind))
    hint = " (load it with --backend torch)" if kind.startswith("onnx") and "gradients" in lacks else ""
    return (
        f"{need} does not apply to {name}, {with_article(DESCRIPTION[kind])}: {WHY[lacks[0]]}{hint}; "
        f"maps that apply to it: {valid}"
    )


MAPS = ("attention", "rollout", "flow", "norm", "grad", "value_zeroing")
