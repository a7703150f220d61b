"""One explorer app for the serve tests: the shipped RNN (ONNX) and a tiny Transformer (torch), and the
shipped classifier, a tiny captioner; a real uvicorn server on 127.0.0.1 for the browser tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def models(transformer_ckpt, captioner_ckpt):
    from attnkit.serve import ModelSet

    return ModelSet(["enfr-rnn", str(transformer_ckpt)], ["reviews-han"], captioners=[str(captioner_ckpt)])


@pytest.fixture(scope="session")
def app(models):
    from attnkit.serve import create_app

    return create_app(models)


@pytest.fixture(scope="session")
def server(app):
    """uvicorn serving ``app`` in a thread; yields its base URL."""
    from tests.helpers import serve_in_thread

    url, running = serve_in_thread(app)
    yield url
    running.should_exit = True
    running.thread.join(timeout=10)
