"""``attnkit export MODEL --format hf``: an attnkit Transformer as a Hugging Face Pegasus folder that
``transformers`` loads with its own classes (no remote code).

Pegasus has attnkit's layout: pre-norm layers with a final LayerNorm on each side, sinusoidal positions
from 0 with the same frequencies, embeddings scaled by sqrt(D), ReLU feed-forward, biased projections,
tied embeddings. Two differences are absorbed exactly:

- attnkit interleaves sine and cosine coordinates (2i, 2i+1), Pegasus puts all sines first. Permuting the
  residual stream's D coordinates (embedding columns, the input columns of every linear that reads the
  stream, the output rows and biases of every linear that writes it, LayerNorm weights and biases) turns
  one into the other without changing any output; the heads' own dimensions are untouched.
- attnkit scores only the target side's ids (``TiedOutput(target_ids)``): ``final_logits_bias`` is -1e9
  on every other id, so the softmax over the rest is unchanged.

The sentencepiece model becomes a ``tokenizer.json`` (Unigram, the same pieces, scores and ids; its NFKC
map; whitespace as sentencepiece treats it) loaded as ``PreTrainedTokenizerFast``. ``config.json`` says
``attnkit_search: "attnkit"`` so that attnkit's Hugging Face backend decodes with attnkit's own beam rules
(``generate()`` keeps its own). RNN models have no Hugging Face architecture: refused.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import torch

from ..errors import ExportError
from ..models.build import load_for_inference
from ..pretrained import resolve
from ..vocab import BOS, EOS, PAD, UNK
from .folders import check_out, readable
from .graphs import MAX_POSITIONS

PROBES = ["The cat sits on the mat.", "Where is the station?", "I would like a coffee, please."]


def _layer(
    state: dict[str, torch.Tensor], src: str, dst: str, perm: torch.Tensor, cross: bool
) -> dict[str, Any]:
    """One attnkit layer's weights under Pegasus names, the residual stream permuted."""
    out: dict[str, Any] = {}
    norms = {"self_norm": "self_attn_layer_norm", "ff_norm": "final_layer_norm"}
    attentions = {"self_attn": "self_attn"}
    if cross:
        norms["cross_norm"] = "encoder_attn_layer_norm"
        attentions["cross_attn"] = "encoder_attn"
    for ours, theirs in norms.items():
        for part in ("weight", "bias"):
            out[f"{dst}.{theirs}.{part}"] = state[f"{src}.{ours}.{part}"][perm]
    for ours, theirs in attentions.items():
        for proj in ("query", "key", "value"):
            out[f"{dst}.{theirs}.{proj[0]}_proj.weight"] = state[f"{src}.{ours}.{proj}_proj.weight"][:, perm]
            out[f"{dst}.{theirs}.{proj[0]}_proj.bias"] = state[f"{src}.{ours}.{proj}_proj.bias"]
        out[f"{dst}.{theirs}.out_proj.weight"] = state[f"{src}.{ours}.out_proj.weight"][perm]
        out[f"{dst}.{theirs}.out_proj.bias"] = state[f"{src}.{ours}.out_proj.bias"][perm]
    out[f"{dst}.fc1.weight"] = state[f"{src}.ff.0.weight"][:, perm]
    out[f"{dst}.fc1.bias"] = state[f"{src}.ff.0.bias"]
    out[f"{dst}.fc2.weight"] = state[f"{src}.ff.3.weight"][perm]
    out[f"{dst}.fc2.bias"] = state[f"{src}.ff.3.bias"][perm]
    return out


def pegasus_weights(
    state: dict[str, torch.Tensor], layers: tuple[int, int], target_ids: list[int]
) -> dict[str, Any]:
    """attnkit Transformer state -> PegasusForConditionalGeneration state (positions are computed)."""
    embedding = state["embedding.weight"].float()
    d_model = embedding.shape[1]
    perm = torch.cat([torch.arange(0, d_model, 2), torch.arange(1, d_model, 2)])
    state = {k: v.float() for k, v in state.items()}
    shared = embedding[:, perm].contiguous()
    out: dict[str, Any] = {
        "model.shared.weight": shared,
        "model.encoder.embed_tokens.weight": shared,
        "model.decoder.embed_tokens.weight": shared,
        "lm_head.weight": shared,
    }
    for side, count, cross in (("encoder", layers[0], False), ("decoder", layers[1], True)):
        for i in range(count):
            out |= _layer(state, f"{side}.{i}", f"model.{side}.layers.{i}", perm, cross)
        for part in ("weight", "bias"):
            out[f"model.{side}.layer_norm.{part}"] = state[f"{side}_norm.{part}"][perm]
    bias = torch.full((1, embedding.shape[0]), -1e9)
    bias[0, torch.tensor(target_ids)] = 0.0
    out["final_logits_bias"] = bias
    return out


def fast_tokenizer(model_proto: bytes) -> Any:
    """The sentencepiece model as a ``PreTrainedTokenizerFast`` with the same ids (Unigram pieces and
    scores, its precompiled NFKC map, dummy prefix, extra whitespace removed), ``</s>`` appended."""
    from sentencepiece import sentencepiece_model_pb2 as pb
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    proto: Any = pb.ModelProto()  # type: ignore[attr-defined]
    proto.ParseFromString(model_proto)
    if proto.trainer_spec.model_type != 1:  # UNIGRAM
        raise ExportError("--format hf needs a unigram sentencepiece model")
    tokenizer = Tokenizer(
        models.Unigram([(p.piece, p.score) for p in proto.pieces], unk_id=UNK, byte_fallback=False)
    )
    steps: list[Any] = []
    if proto.normalizer_spec.precompiled_charsmap:
        steps.append(normalizers.Precompiled(proto.normalizer_spec.precompiled_charsmap))
    if proto.normalizer_spec.remove_extra_whitespaces:
        steps += [normalizers.Strip(), normalizers.Replace(Regex(" {2,}"), " ")]
    tokenizer.normalizer = normalizers.Sequence(steps)
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(
        replacement="\u2581", prepend_scheme="always", split=True
    )
    tokenizer.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    eos = proto.pieces[EOS].piece
    tokenizer.post_processor = processors.TemplateProcessing(single=f"$A {eos}", special_tokens=[(eos, EOS)])
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        unk_token=proto.pieces[UNK].piece,
        pad_token=proto.pieces[PAD].piece,
        bos_token=proto.pieces[BOS].piece,
        eos_token=eos,
    )


def export_hf(path_or_name: str | Path | None, out: str | Path) -> dict[str, Any]:
    """Write the Hugging Face folder for an attnkit Transformer, check it against the torch model (same
    greedy and beam-5 translations, attention within 1e-4) and only then move it to ``out``."""
    from transformers import PegasusConfig, PegasusForConditionalGeneration

    path = resolve(path_or_name, "translation")
    check_out(Path(out), path, "attnkit_export.json")
    ckpt, config = load_for_inference(path, "translation")
    if config.model.name != "transformer":
        raise ExportError(
            f"{path}: --format hf exports Transformers; an RNN has no Hugging Face architecture"
        )
    if "src_embedding.weight" in ckpt.model or ckpt.target_tokenizer:
        raise ExportError(f"{path}: --format hf needs one joint vocabulary (Pegasus shares its embeddings)")
    t = config.model.transformer
    vocab = int(ckpt.model["embedding.weight"].shape[0])
    settings: dict[str, Any] = dict(
        vocab_size=vocab,
        d_model=t.d_model,
        encoder_layers=t.encoder_layers,
        decoder_layers=t.decoder_layers,
        encoder_attention_heads=t.num_heads,
        decoder_attention_heads=t.num_heads,
        encoder_ffn_dim=t.ff_size,
        decoder_ffn_dim=t.ff_size,
        activation_function="relu",
        scale_embedding=True,
        max_position_embeddings=MAX_POSITIONS,  # as the ONNX step graph
        dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
        pad_token_id=PAD,
        bos_token_id=BOS,
        eos_token_id=EOS,
        decoder_start_token_id=BOS,
        forced_eos_token_id=EOS,
        tie_word_embeddings=True,
        attnkit_search="attnkit",
        attnkit_attention_layer=int(t.attention_layer),
    )
    model = PegasusForConditionalGeneration(PegasusConfig(**settings))
    weights = pegasus_weights(ckpt.model, (t.encoder_layers, t.decoder_layers), list(ckpt.target_ids or []))
    missing, unexpected = model.load_state_dict(weights, strict=False)
    left = [k for k in missing if "embed_positions" not in k]
    if left or unexpected:
        raise ExportError(f"{path}: weights that do not map onto Pegasus: {(left + unexpected)[:5]}")
    out = Path(out)
    tmp = out.with_name(f".{out.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        from ..hf.loading import quiet_loading

        with quiet_loading():  # no progress bar of transformers' own
            model.save_pretrained(tmp)
        fast_tokenizer(ckpt.tokenizer or b"").save_pretrained(tmp)
        report = verify_hf(path, tmp)
        (tmp / "attnkit_export.json").write_text(json.dumps({"source": str(path), "check": report}, indent=2))
        readable(tmp)
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return report


def verify_hf(checkpoint: Path, folder: Path) -> dict[str, Any]:
    """The export read back through attnkit's Hugging Face backend against the torch model."""
    import numpy as np

    from ..hf.seq2seq import HFTranslator
    from ..translator import Translator

    ours, theirs = Translator.from_checkpoint(checkpoint), HFTranslator.from_pretrained(folder)
    report: dict[str, Any] = {}
    for beam in (1, 5):
        a, b = ours.translate(PROBES, beam=beam), theirs.translate(PROBES, beam=beam)
        same = [x.target_ids == y.target_ids for x, y in zip(a, b)]
        diff = max(
            float(np.abs(x.attention - y.attention).max())
            for x, y in zip(a, b)
            if x.attention.shape == y.attention.shape
        )
        report[f"beam {beam}"] = {"same_tokens": f"{sum(same)}/{len(same)}", "max_attention_diff": diff}
        if not all(same) or diff > 1e-4:
            raise ExportError(
                f"the Hugging Face export disagrees with the torch model at beam {beam}: {report}"
            )
    return report
