"""attnkit's Hugging Face backend against generate() and inseq on a Marian-sized model.

A Marian with random weights (d_model 512, 6+6 layers, 8 heads, FFN 2048, vocabulary 32,000; the
sentencepiece models are trained on the shipped English-French training split, the vocabulary padded to
32k with entries the generation config suppresses) translates the first N test sentences with beam 5,
in batches, three ways, each in its own process (so each peak RSS is its own):

- ``generate``: ``model.generate(num_beams=5)``, no attention (transformers' default attention kernel);
- ``attnkit``: ``translate(beam=5)``: the same hypotheses with the chosen one's cross-attention (every
  step's, from the eager implementation);
- ``inseq``: ``inseq.load_model(model, "attention").attribute(text)`` (0.7), one sentence per call (see
  ``run_inseq``), the tool a user would otherwise pick for attention over generated tokens.

Random weights never choose </s>, so every sentence runs to its length limit: attnkit's (``max_ratio`` 0,
``max_extra`` L: L tokens then </s>) and generate()'s (``max_new_tokens`` L + 1, ``forced_eos_token_id``)
are the same, and the outputs are compared as text spelled from their pieces.
Prints seconds, sentences/s, peak RSS and the ratios.

    python benchmarks/hf_backend.py [--sentences 500] [--beam 5] [--batch 32] [--length 24] [--no-inseq]
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

FOLDER = Path("/tmp/attnkit-bench-marian")


def sentences(n: int) -> list[str]:
    from attnkit.datasets import parallel_split

    src, _ = parallel_split("tatoeba-eng-fra", "test")
    return gzip.decompress(src.read_bytes()).decode("utf-8").splitlines()[:n]


def _spm(lines: list[str], path: Path) -> None:
    import sentencepiece as spm

    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines),
        model_writer=out,
        vocab_size=8000,
        model_type="unigram",
        unk_id=2,
        bos_id=-1,
        eos_id=1,
        pad_id=0,
        minloglevel=2,
    )
    path.write_bytes(out.getvalue())


def build(folder: Path) -> None:
    """The random Marian-sized model and its tokenizer, saved with save_pretrained (once)."""
    import sentencepiece as spm
    import torch
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    from attnkit.datasets import parallel_split

    folder.mkdir(parents=True, exist_ok=True)
    src, tgt = parallel_split("tatoeba-eng-fra", "train")
    for name, path in (("source.spm", src), ("target.spm", tgt)):
        _spm(gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()[:100_000], folder / name)
    vocab = {"<pad>": 0, "</s>": 1, "<unk>": 2}
    for name in ("source.spm", "target.spm"):
        sp = spm.SentencePieceProcessor(model_file=str(folder / name))
        for i in range(sp.get_piece_size()):
            vocab.setdefault(sp.id_to_piece(i), len(vocab))
    real = len(vocab)
    for i in range(real, 32_000):
        vocab[f"<unused{i}>"] = i
    (folder / "vocab.json").write_text(json.dumps(vocab))
    tokenizer = MarianTokenizer(
        str(folder / "source.spm"), str(folder / "target.spm"), str(folder / "vocab.json")
    )
    config = MarianConfig(
        vocab_size=32_000,
        d_model=512,
        encoder_layers=6,
        decoder_layers=6,
        encoder_attention_heads=8,
        decoder_attention_heads=8,
        encoder_ffn_dim=2048,
        decoder_ffn_dim=2048,
        max_position_embeddings=512,
        pad_token_id=0,
        eos_token_id=1,
        decoder_start_token_id=0,
        forced_eos_token_id=1,
    )
    torch.manual_seed(0)
    model = MarianMTModel(config)
    # the padding entries of the vocabulary are never generated (by all three tools: generate() and inseq
    # read the generation config, attnkit applies its suppress_tokens), so outputs are real pieces
    model.generation_config.suppress_tokens = list(range(real, 32_000))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def run_generate(texts: list[str], beam: int, batch: int, length: int) -> list[str]:
    import torch
    from transformers import MarianMTModel, MarianTokenizer

    tokenizer = MarianTokenizer.from_pretrained(FOLDER)
    model = MarianMTModel.from_pretrained(FOLDER).eval()
    out: list[str] = []
    for start in range(0, len(texts), batch):
        inputs = tokenizer(texts[start : start + batch], return_tensors="pt", padding=True)
        with torch.no_grad():
            ids = model.generate(**inputs, num_beams=beam, do_sample=False, max_new_tokens=length + 1)
        out += [spelled(tokenizer.convert_ids_to_tokens(row)) for row in ids]
    return out


def run_attnkit(texts: list[str], beam: int, batch: int, length: int) -> list[str]:
    from attnkit.api import load_translator

    translator = load_translator(str(FOLDER))
    results = translator.translate(texts, beam=beam, batch_size=batch, max_ratio=0.0, max_extra=length)
    assert all(r.attention.shape == (len(r.target_tokens), len(r.source_tokens)) for r in results)
    return [spelled(r.target_tokens) for r in results]


def run_inseq(texts: list[str], beam: int, batch: int, length: int) -> list[str]:
    """One sentence per call: given a list with beam search, inseq 0.7.1 (with transformers 5.25) answered
    every sentence with the first one's translation (found here; a single sentence is answered right)."""
    import inseq

    model = inseq.load_model(str(FOLDER), "attention")
    settings = {"num_beams": beam, "max_new_tokens": length + 1, "do_sample": False}
    out = []
    for text in texts:
        found = model.attribute(text, generation_args=settings, show_progress=False)
        out.append(spelled([t.token for t in found.sequence_attributions[0].target]))
    return out


SPECIAL = {"<pad>", "</s>"}


def spelled(pieces: list[str]) -> str:
    """The text of sentencepiece pieces (inseq re-tokenizes its output, so pieces are not comparable)."""
    return "".join(p for p in pieces if p not in SPECIAL).replace("\u2581", " ").strip()


RUNS = {"generate": run_generate, "attnkit": run_attnkit, "inseq": run_inseq}


def child(tool: str, n: int, beam: int, batch: int, length: int) -> None:
    """One tool in this process: prints seconds, outputs and peak RSS as JSON."""
    warnings.simplefilter("ignore")
    texts = sentences(n)
    began = time.perf_counter()
    outputs = RUNS[tool](texts, beam, batch, length)
    seconds = time.perf_counter() - began
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "outputs": outputs, "peak_mb": peak}))


def measure(tool: str, args: argparse.Namespace) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", tool, "--sentences", str(args.sentences)]
    command += ["--beam", str(args.beam), "--batch", str(args.batch), "--length", str(args.length)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=7200)
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "failed"}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sentences", type=int, default=500)
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=24, help="tokens before </s> (random weights)")
    parser.add_argument("--no-inseq", action="store_true")
    parser.add_argument("--child", choices=list(RUNS))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.sentences, args.beam, args.batch, args.length)
        return
    if not (FOLDER / "config.json").is_file():
        build(FOLDER)
    tools = ["generate", "attnkit"] + ([] if args.no_inseq else ["inseq"])
    rows = {tool: measure(tool, args) for tool in tools}
    print(
        f"Marian-sized random model (d512, 6+6 layers, vocab 32k), {args.sentences} test sentences, "
        f"beam {args.beam}, batches of {args.batch}, {args.length} tokens + </s> each"
    )
    base = rows["generate"]
    print(
        f"{'tool':10s} {'seconds':>8s} {'sent/s':>7s} {'peak MB':>8s} {'time / generate':>16s}  same output"
    )
    for tool, row in rows.items():
        if "error" in row:
            print(f"{tool:10s} failed: {row['error'][:120]}")
            continue
        same = sum(a.strip() == b.strip() for a, b in zip(row["outputs"], base["outputs"]))
        print(
            f"{tool:10s} {row['seconds']:8.1f} {args.sentences / row['seconds']:7.1f} {row['peak_mb']:8.0f}"
            f" {row['seconds'] / base['seconds']:15.2f}x  {same}/{len(base['outputs'])}"
        )
    if "inseq" in rows and "error" not in rows["inseq"]:
        a, i = rows["attnkit"], rows["inseq"]
        ratio = a["seconds"] / i["seconds"]
        print(f"attnkit / inseq: {ratio:.2f}x time, {a['peak_mb'] / i['peak_mb']:.2f}x peak RSS")
    if args.out:
        args.out.write_text(
            json.dumps({k: {x: y for x, y in v.items() if x != "outputs"} for k, v in rows.items()})
        )


if __name__ == "__main__":
    main()
