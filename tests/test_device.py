"""Devices: auto/cpu/cuda resolution, moving nested batches, the same results on CUDA when present."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from attnkit.data.batching import make_batch
from attnkit.device import DeviceError, resolve_device, to_device


def test_resolve_device_names():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(DeviceError, match="valid: auto, cpu, cuda, cuda:N"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(DeviceError, match="no CUDA GPU"):
            resolve_device("cuda")


def test_to_device_moves_dataclasses_and_keeps_tied_weights_tied():
    batch = make_batch([[5, 6], [7]], [[8], [9, 10]])
    moved = to_device(batch, "cpu")
    assert torch.equal(moved.src, batch.src) and torch.equal(moved.tgt_mask, batch.tgt_mask)
    emb = nn.Embedding(4, 3)
    state = to_device({"a": emb.weight.detach(), "b": emb.weight.detach()}, "cpu")
    assert state["a"].untyped_storage().data_ptr() == state["b"].untyped_storage().data_ptr()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_shipped_translator_gives_the_same_translation_on_cuda():
    from attnkit.translator import Translator

    sentences = ["The cat sits on the mat.", "I like green tea."]
    cpu = Translator.from_checkpoint("src/attnkit/pretrained/enfr-rnn/model.pt")
    gpu = Translator.from_checkpoint("src/attnkit/pretrained/enfr-rnn/model.pt", device="cuda")
    a, b = cpu.translate(sentences, beam=5), gpu.translate(sentences, beam=5)
    assert [t.translation for t in a] == [t.translation for t in b]
    assert all(abs(x.attention - y.attention).max() < 1e-3 for x, y in zip(a, b))


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message on a machine without CUDA")
def test_cli_device_cuda_without_gpu_is_one_line_exit_2():
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "attnkit", "translate", "--device", "cuda", "Hi."],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "attnkit translate: error: device 'cuda': this machine has no CUDA GPU (use --device cpu or auto)"
    ]
