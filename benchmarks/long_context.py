"""Long-context attention capture (issue 43): peak memory and time, each tool in its own process, ratios in
one run.

The model: a Llama-architecture config of about 100 M parameters with grouped-query attention (hidden 768,
12 layers, 12 query heads over 4 key heads, MLP 2048, vocabulary 32,000; random weights, seeded: cost does
not depend on training). At each length (1k, 4k, 8k, 16k tokens of random ids):

- ``forward``: the backbone's plain forward pass (SDPA), no capture: the baseline;
- ``rows``: attnkit capturing one layer's rows for the last 64 tokens, every head
  (``Plan(aggregates=False)``);
- ``aggregates``: attnkit's per-token aggregates of every layer plus one layer's 64 rows (the pass of
  ``attnkit.inspect``);
- ``output_attentions``: transformers' eager attention returning every layer's (H, T, T), where it fits in
  24 GB (12 x 12 x T^2 x 4 bytes: 9.7 GB at 4k, 38.7 GB at 8k: not run, the arithmetic is printed);
- ``inseq``: inseq's attention attribution (``inseq.load_model(model, "attention")``) at 1k, when inseq is
  installed in a Python given by --inseq-python (it pins its own transformers); else skipped, said why.

Peak memory is each child's own VmHWM (its peak resident set). Run on an otherwise idle machine:

    python benchmarks/long_context.py [--lengths 1024,4096,8192,16384] [--inseq-python PATH]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

CONFIG = {
    "vocab_size": 32000,
    "hidden_size": 768,
    "intermediate_size": 2048,
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "num_key_value_heads": 4,
    "max_position_embeddings": 16384,
}
LIMIT_BYTES = 24 << 30


def _model():  # type: ignore[no-untyped-def]
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    torch.set_num_threads(2)
    model = LlamaForCausalLM(LlamaConfig(**CONFIG)).eval()
    model.set_attn_implementation("sdpa")
    return model


def _peak_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def child(tool: str, length: int) -> dict[str, float]:
    """One measurement, in this (fresh) process."""
    import torch

    model = _model()
    ids = torch.randint(0, CONFIG["vocab_size"], (1, length), generator=torch.Generator().manual_seed(1))
    rows = list(range(length - 64, length))
    start = time.perf_counter()
    with torch.no_grad():
        if tool == "forward":
            model.base_model(input_ids=ids, use_cache=False)
        elif tool in ("rows", "aggregates"):
            from attnkit.hf.capture import Plan, capturing

            plan = Plan(layers=[11], heads=list(range(12)), rows=rows, aggregates=tool == "aggregates")
            with capturing(model, plan):
                model.base_model(input_ids=ids, use_cache=False)
        elif tool == "output_attentions":
            model.set_attn_implementation("eager")
            model.base_model(input_ids=ids, use_cache=False, output_attentions=True)
    return {"seconds": time.perf_counter() - start, "peak_mb": _peak_mb()}


INSEQ = """
import json, sys, time, torch
import inseq
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
from tokenizers import Tokenizer, models, pre_tokenizers
config = json.loads(sys.argv[1]); length = int(sys.argv[2])
torch.manual_seed(0); torch.set_num_threads(2)
model = LlamaForCausalLM(LlamaConfig(**config)).eval()
model.set_attn_implementation("eager")  # inseq reads output_attentions, which SDPA does not return
words = {"<unk>": 0, "<s>": 1, "</s>": 2, "<pad>": 3, **{f"w{i}": i for i in range(4, config["vocab_size"])}}
core = Tokenizer(models.WordLevel(words, unk_token="<unk>"))
core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
tok = PreTrainedTokenizerFast(
    tokenizer_object=core, bos_token="<s>", eos_token="</s>", unk_token="<unk>", pad_token="<pad>"
)
text = " ".join(f"w{i}" for i in torch.randint(4, config["vocab_size"], (length,)).tolist())
attributor = inseq.load_model(model, "attention", tokenizer=tok)
start = time.perf_counter()
attributor.attribute(text, generation_args={"max_new_tokens": 1})
peak = [int(l.split()[1]) / 1024 for l in open("/proc/self/status") if l.startswith("VmHWM:")][0]
print(json.dumps({"seconds": time.perf_counter() - start, "peak_mb": peak}))
"""


def run_child(tool: str, length: int, inseq_python: str | None) -> dict[str, float] | str:
    if tool == "output_attentions" and 12 * 12 * length * length * 4 > LIMIT_BYTES:
        size = 12 * 12 * length * length * 4 / 2**30
        return f"not run: 12 layers x 12 heads x {length}^2 x 4 B = {size:.1f} GiB > 24 GB"
    if tool == "inseq":
        if inseq_python is None:
            return "not run: inseq is not installed here (--inseq-python PATH: a Python with inseq)"
        command = [inseq_python, "-c", INSEQ, json.dumps(CONFIG), str(length)]
    else:
        command = [sys.executable, __file__, "--child", tool, "--length", str(length)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        return f"failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default="1024,4096,8192,16384")
    parser.add_argument("--inseq-python", default=None)
    parser.add_argument("--child", default=None)
    parser.add_argument("--length", type=int, default=0)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.length)))
        return 0
    lengths = [int(n) for n in args.lengths.split(",")]
    print(f"Llama-style config: {json.dumps(CONFIG)}")
    print(f"{'tokens':>7} {'tool':<18} {'seconds':>9} {'peak MB':>9} {'time / forward':>15}")
    for length in lengths:
        tools = ["forward", "rows", "aggregates", "output_attentions"] + (["inseq"] if length == 1024 else [])
        base = None
        for tool in tools:
            found = run_child(tool, length, args.inseq_python)
            if isinstance(found, str):
                print(f"{length:>7} {tool:<18} {found}")
                continue
            base = found["seconds"] if tool == "forward" else base
            ratio = f"{found['seconds'] / base:.2f}x" if base else ""
            print(
                f"{length:>7} {tool:<18} {found['seconds']:>9.2f} {found['peak_mb']:>9.0f} {ratio:>15}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
