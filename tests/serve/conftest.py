"""One explorer app for the serve tests: the shipped RNN (ONNX) and a tiny Transformer (torch), and the
shipped classifier; a real uvicorn server on 127.0.0.1 for the browser tests."""

from __future__ import annotations

import socket
import threading
import time

import pytest


@pytest.fixture(scope="session")
def models(transformer_ckpt):
    from attnkit.serve import ModelSet

    return ModelSet(["enfr-rnn", str(transformer_ckpt)], ["reviews-han"])


@pytest.fixture(scope="session")
def app(models):
    from attnkit.serve import create_app

    return create_app(models)


@pytest.fixture(scope="session")
def server(app):
    """uvicorn serving ``app`` in a thread; yields its base URL."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)
