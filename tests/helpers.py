"""Tiny models and batches shared by tests."""

from __future__ import annotations

import torch

from attnkit.models.rnn_seq2seq import RNNSeq2Seq
from attnkit.models.transformer import TransformerSeq2Seq

VOCAB = 24


def tiny_rnn(scorer: str = "additive", input_feeding: bool = True, rnn_type: str = "gru") -> RNNSeq2Seq:
    torch.manual_seed(0)
    return RNNSeq2Seq(
        VOCAB, 16, 16, scorer=scorer, rnn_type=rnn_type, dropout=0.0, input_feeding=input_feeding
    )


def tiny_transformer() -> TransformerSeq2Seq:
    torch.manual_seed(0)
    return TransformerSeq2Seq(
        VOCAB, d_model=16, num_heads=2, ff_size=32, encoder_layers=2, decoder_layers=2, dropout=0.0
    )


def random_sequences(n: int, seed: int = 0, low: int = 4, max_len: int = 7) -> list[list[int]]:
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, max_len + 1, (n,), generator=g)
    return [torch.randint(low, VOCAB, (int(k),), generator=g).tolist() for k in lengths]


def tiny_han_run(tmp_path, **overrides: object) -> list[str]:
    """``--set`` arguments training a tiny HAN of configs/reviews-han.yaml on a 40-review file in tmp_path
    (labels 1, 3, 5 with counts 10, 10, 20)."""
    import json

    rows = [("Love it. Great fit!", 5), ("Terrible fabric. Ripped.", 1), ("Soft and pretty.", 5), ("Ok.", 3)]
    data = tmp_path / "reviews.jsonl"
    data.write_text("\n".join(json.dumps({"text": t, "label": y}) for t, y in rows * 10) + "\n")
    values = {
        "data.train": f"[{data}]",
        "data.dev": f"[{data}]",
        "data.min_freq": 1,
        "model.han.embed_size": 8,
        "model.han.word_hidden": 4,
        "model.han.sentence_hidden": 4,
        "training.progress": False,
        **overrides,
    }
    return [x for k, v in values.items() for x in ("--set", f"{k}={v}")]


def han_overrides(data) -> list[str]:
    """``--set`` values for a HAN trained and validated on one tiny JSON Lines file ``data``."""
    return [
        "task=classification",
        "model.name=han",
        f"data.train=[{data}]",
        f"data.dev=[{data}]",
        "data.min_freq=1",
    ]


def serve_in_thread(app):  # type: ignore[no-untyped-def]
    """uvicorn serving ``app`` on a free 127.0.0.1 port in a daemon thread: (base URL, server)."""
    import socket
    import threading
    import time

    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    server.thread = threading.Thread(target=server.run, daemon=True)
    server.thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server
