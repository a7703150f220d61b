"""A model with known induction heads (Olsson et al. 2022's setting): a 2-layer attention-only Llama (each
MLP's output projection zeroed and frozen, so the MLPs add nothing) trained on random token sequences
repeated once, "<s> r1 .. rn r1 .. rn", until its loss on the second repeat falls far below the first's:
only a head that finds the earlier occurrence of the current token and copies the token after it (an
induction head, fed by a previous-token head in layer 0) can predict the repeat."""

from __future__ import annotations

from typing import Any

VOCAB = 64  # content tokens t0..t63, after <s>, </s>, <pad>


def tokenizer() -> Any:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = {"<s>": 0, "</s>": 1, "<pad>": 2, **{f"t{i}": 3 + i for i in range(VOCAB)}}
    core = Tokenizer(models.WordLevel(words, unk_token="<pad>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(
        tokenizer_object=core, bos_token="<s>", eos_token="</s>", pad_token="<pad>"
    )


def model(seed: int = 0) -> Any:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=3 + VOCAB,
        hidden_size=64,
        intermediate_size=8,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=160,
        bos_token_id=0,
        eos_token_id=1,
        pad_token_id=2,
        tie_word_embeddings=False,
    )
    lm = LlamaForCausalLM(config)
    for layer in lm.model.layers:  # attention-only: the MLPs output exactly zero
        with torch.no_grad():
            layer.mlp.down_proj.weight.zero_()
        for p in layer.mlp.parameters():
            p.requires_grad_(False)
    return lm


def batch(generator: Any, size: int, length: int) -> Any:
    import torch

    half = torch.randint(3, 3 + VOCAB, (size, length), generator=generator)
    return torch.cat([torch.zeros(size, 1, dtype=torch.long), half, half], 1)


def repeat_losses(lm: Any, length: int = 24) -> tuple[float, float]:
    """Mean next-token loss on the first and on the second repeat of fresh sequences."""
    import torch

    ids = batch(torch.Generator().manual_seed(99), 64, length)
    with torch.no_grad():
        logits = lm(input_ids=ids).logits[:, :-1]
    losses = torch.nn.functional.cross_entropy(logits.transpose(1, 2), ids[:, 1:], reduction="none").mean(0)
    return float(losses[1:length].mean()), float(losses[length + 1 :].mean())


def train(lm: Any, steps: int = 1500, seed: int = 0) -> list[tuple[int, float, float]]:
    """Adam on sequences of 8 to 32 tokens repeated; returns (step, first-repeat loss, second-repeat loss)."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.Adam([p for p in lm.parameters() if p.requires_grad], lr=3e-3)
    lm.train()
    history = []
    for step in range(1, steps + 1):
        length = int(torch.randint(8, 33, (1,), generator=generator))
        ids = batch(generator, 32, length)
        loss = lm(input_ids=ids, labels=ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        if step % 250 == 0:
            lm.eval()
            history.append((step, *repeat_losses(lm)))
            lm.train()
    lm.eval()
    return history
