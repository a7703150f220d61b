"""The shipped causal LM, ``enfr-llama`` (issue 43): a Hugging Face Llama folder that plain transformers
loads, the default of ``attnkit inspect``, with real patterns on real text (a previous-token head, local
heads) inside the 1,024 positions it was trained on, refused past them."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

import attnkit
from attnkit import store
from attnkit.errors import UsageError

pytestmark = pytest.mark.skipif(
    store.local("pretrained", "enfr-llama") is None, reason="enfr-llama not installed"
)


def _text(n: int = 80) -> str:
    from attnkit.datasets import parallel_split

    with gzip.open(parallel_split("tatoeba-eng-fra", "dev")[0], "rt", encoding="utf-8") as handle:
        return " ".join(handle.read().splitlines()[:n])


def test_plain_transformers_loads_it_and_continues_english():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = store.folder("pretrained", "enfr-llama")
    model, tokenizer = AutoModelForCausalLM.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)
    assert (
        model.config.model_type == "llama"
        and model.config.num_key_value_heads < model.config.num_attention_heads
    )
    ids = tokenizer("I would like a cup of", return_tensors="pt")["input_ids"]
    out = model.generate(input_ids=ids, max_new_tokens=3, do_sample=False)
    assert tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True).strip()


def test_inspect_reads_it_by_default_and_finds_its_heads():
    """On 250 tokens of dev text: a previous-token head and a local head by the rules; on 1,000 tokens the
    same head still puts the largest share of any head on the token before (measured: 0.57 and 0.48)."""
    short = attnkit.inspect(None, _text(), max_tokens=250)
    assert short.model.endswith("enfr-llama") and len(short.tokens) == 250
    roles = [role for row in short.roles for role in row]
    assert "previous-token" in roles and "local" in roles
    found = [(i, h) for i, row in enumerate(short.roles) for h, r in enumerate(row) if r == "previous-token"]
    assert all(short.previous[i, h] >= 0.5 for i, h in found)
    long = attnkit.inspect(None, _text(200), max_tokens=1000, probe=False)
    assert len(long.tokens) == 1000 and np.allclose(long.received.sum(1), 1.0, atol=1e-4)
    best = np.unravel_index(long.previous.argmax(), long.previous.shape)
    assert best in found and long.previous[best] >= 0.4


def test_past_its_positions_is_one_line():
    with pytest.raises(UsageError, match=r"reads at most 1024 positions"):
        attnkit.inspect(None, _text(400), probe=False)
