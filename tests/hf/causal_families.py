"""Tiny decoder-only models of each family transformers has (GPT-2, Llama, Mistral with a sliding window,
Qwen2, Gemma, Gemma2 with soft-capping and alternating sliding layers, Phi with partial rotary, Bloom and
MPT with ALiBi, Phi3),
built offline from their configs with one byte-level BPE trained here, random weights (seeded), saved with
``save_pretrained``. What the tests check is attention arithmetic, not fluency."""

from __future__ import annotations

from pathlib import Path

TEXT = ["the cat sits on the mat", "le chat est assis sur le tapis", "where is the dog", "i like tea"]
COMMON = {"vocab_size": 0, "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4}
FAMILIES = {
    "gpt2": ("GPT2Config", "GPT2LMHeadModel", {"n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 256}),
    "llama": (
        "LlamaConfig",
        "LlamaForCausalLM",
        {**COMMON, "num_key_value_heads": 2, "intermediate_size": 64},
    ),
    "mistral": (
        "MistralConfig",
        "MistralForCausalLM",
        {**COMMON, "num_key_value_heads": 2, "intermediate_size": 64, "sliding_window": 8},
    ),
    "qwen2": (
        "Qwen2Config",
        "Qwen2ForCausalLM",
        {**COMMON, "num_key_value_heads": 1, "intermediate_size": 64},
    ),
    "gemma": (
        "GemmaConfig",
        "GemmaForCausalLM",
        {**COMMON, "num_key_value_heads": 2, "head_dim": 8, "intermediate_size": 64},
    ),
    "gemma2": (
        "Gemma2Config",
        "Gemma2ForCausalLM",
        {
            **COMMON,
            "num_key_value_heads": 2,
            "head_dim": 8,
            "intermediate_size": 64,
            "sliding_window": 6,
            "attn_logit_softcapping": 5.0,
            "query_pre_attn_scalar": 16,
        },
    ),
    "phi": ("PhiConfig", "PhiForCausalLM", {**COMMON, "intermediate_size": 64, "partial_rotary_factor": 0.5}),
    "bloom": ("BloomConfig", "BloomForCausalLM", {"hidden_size": 32, "n_layer": 2, "n_head": 4}),  # ALiBi
    "mpt": (  # ALiBi, clipped q/k/v
        "MptConfig",
        "MptForCausalLM",
        {
            "d_model": 32,
            "n_layers": 2,
            "n_heads": 4,
            "max_seq_len": 256,
            "attn_config": {"alibi": True, "clip_qkv": 6.0},
        },
    ),
    "phi3": (
        "Phi3Config",
        "Phi3ForCausalLM",
        {**COMMON, "num_key_value_heads": 2, "intermediate_size": 64, "pad_token_id": 0},
    ),
}


def tokenizer(folder: Path):  # type: ignore[no-untyped-def]
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        TEXT * 5, vocab_size=300, min_frequency=1, special_tokens=["<s>", "</s>", "<pad>"]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=bpe._tokenizer, bos_token="<s>", eos_token="</s>", pad_token="<pad>"
    )


def build(family: str, folder: Path) -> Path:
    """The tiny ``family`` model and its tokenizer saved in ``folder``."""
    import torch
    import transformers

    config_name, model_name, sizes = FAMILIES[family]
    folder.mkdir(parents=True, exist_ok=True)
    tok = tokenizer(folder)
    sizes = {**sizes, "vocab_size": len(tok)} if "vocab_size" in sizes else {**sizes, "vocab_size": len(tok)}
    config = getattr(transformers, config_name)(
        **sizes,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        **({} if "pad_token_id" in sizes else {"pad_token_id": tok.pad_token_id}),
    )
    torch.manual_seed(0)
    model = getattr(transformers, model_name)(config)
    with torch.no_grad():  # larger query/key weights than the init's: peaked rows, a sharper test
        for name, p in model.named_parameters():
            if (
                any(k in name for k in ("q_proj", "k_proj", "c_attn", "query_key_value", "Wqkv"))
                and p.dim() == 2
            ):
                p.mul_(4.0)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder
