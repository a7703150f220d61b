"""Train the shipped small causal LM (issue 43): a Llama-architecture model in Hugging Face format, with a
byte-fallback BPE tokenizer, on the project's English and French text (Tatoeba eng-fra train, both
sides), so that `attnkit inspect` has real attention patterns to show offline (sinks, previous-token heads).

    python scripts/train_causal_lm.py --out work/causal-lm [--steps 3000] [--resume]

Sentences are packed "<s> sentence </s> <s> sentence </s> ..." into windows of --context tokens (a window
starts wherever the packing puts it, so the model sees sentences begin mid-window too). Dev perplexity is
measured on the dev split packed the same way (per token, </s> included). Checkpoints every 250 steps;
--resume continues from the last one. Prints steps/s so the arithmetic can be checked.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import random
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src" / "attnkit" / "datasets" / "tatoeba_eng_fra"


def sentences(split: str) -> list[str]:
    lines = []
    for side in ("en", "fr"):
        with gzip.open(DATA / f"{split}.{side}.gz", "rt", encoding="utf-8") as handle:
            lines += [line.strip() for line in handle if line.strip()]
    random.Random(0).shuffle(lines)
    return lines


def tokenizer_for(texts: list[str], vocab_size: int):  # type: ignore[no-untyped-def]
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    core.pre_tokenizer = pre_tokenizers.Metaspace()
    core.decoder = decoders.Metaspace()
    bytes_ = [f"<0x{i:02X}>" for i in range(256)]
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=["<unk>", "<s>", "</s>", "<pad>", *bytes_], show_progress=False
    )
    core.train_from_iterator(texts, trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=core, bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="<pad>"
    )


def pack(tokenizer, texts: list[str], context: int) -> torch.Tensor:  # type: ignore[no-untyped-def]
    ids: list[int] = []
    for start in range(0, len(texts), 2000):
        for row in tokenizer(texts[start : start + 2000], add_special_tokens=False)["input_ids"]:
            ids += [tokenizer.bos_token_id, *row, tokenizer.eos_token_id]
    usable = len(ids) // context * context
    return torch.tensor(ids[:usable]).view(-1, context)


@torch.no_grad()
def perplexity(model, windows: torch.Tensor, batch: int = 16) -> float:  # type: ignore[no-untyped-def]
    model.eval()
    total, count = 0.0, 0
    for start in range(0, len(windows), batch):
        chunk = windows[start : start + batch]
        loss = model(input_ids=chunk, labels=chunk).loss
        n = chunk.numel() - len(chunk)
        total, count = total + float(loss) * n, count + n
    model.train()
    return math.exp(total / count)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--context", type=int, default=256)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--vocab", type=int, default=4000)
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args()
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    torch.set_num_threads(2)
    args.out.mkdir(parents=True, exist_ok=True)
    state = args.out / "training-state.pt"
    train_texts = sentences("train")
    if args.resume and (args.out / "tokenizer.json").is_file():
        tokenizer = AutoTokenizer.from_pretrained(args.out)
    else:
        tokenizer = tokenizer_for(train_texts, args.vocab)
        tokenizer.save_pretrained(args.out)
    windows, dev = pack(tokenizer, train_texts, args.context), pack(tokenizer, sentences("dev"), args.context)
    print(f"{len(windows)} training windows of {args.context} tokens, {len(dev)} dev windows", flush=True)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=256, intermediate_size=704, num_hidden_layers=4,
        num_attention_heads=8, num_key_value_heads=2, max_position_embeddings=4096, rope_theta=10000.0,
        tie_word_embeddings=True, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model = LlamaForCausalLM(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01, betas=(0.9, 0.95))
    schedule = lambda s: min(1.0, (s + 1) / 200) * max(0.1, 0.5 * (1 + math.cos(math.pi * s / args.steps)))  # noqa: E731
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    step, log = 0, []
    if args.resume and state.is_file():
        saved = torch.load(state, weights_only=True)
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        scheduler.load_state_dict(saved["scheduler"])
        step, log = saved["step"], json.loads(saved["log"])
    order = torch.Generator().manual_seed(step)
    started = time.time()
    model.train()
    while step < args.steps:
        batch = windows[torch.randint(len(windows), (args.batch,), generator=order)]
        loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        step += 1
        if step % 50 == 0:
            rate = 50 / (time.time() - started)
            print(f"step {step} loss {loss.item():.3f} ({rate:.2f} steps/s)", flush=True)
            started = time.time()
        if step % 250 == 0 or step == args.steps:
            dev_ppl = perplexity(model, dev[:64])
            log.append({"step": step, "loss": round(loss.item(), 4), "dev_perplexity_64": round(dev_ppl, 2)})
            print(f"step {step}: dev perplexity (64 windows) {dev_ppl:.2f}", flush=True)
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                        "scheduler": scheduler.state_dict(), "step": step, "log": json.dumps(log)}, state)
    final = perplexity(model, dev)
    model.save_pretrained(args.out)
    tokenizer.save_pretrained(args.out)
    report = {"steps": step, "dev_perplexity": round(final, 2), "dev_windows": len(dev), "context": args.context,
              "parameters": sum(p.numel() for p in model.parameters()), "log": log}
    (args.out / "training.json").write_text(json.dumps(report, indent=1))
    print(json.dumps({k: v for k, v in report.items() if k != "log"}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
