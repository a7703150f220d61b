"""Hugging Face tests run with sockets blocked: nothing is downloaded, a Hub id fails at once."""

from __future__ import annotations

import socket

import pytest

pytest.importorskip("transformers")

from tests.hf import tiny  # noqa: E402


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("network access is blocked in the Hugging Face tests")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)


@pytest.fixture(scope="session")
def marian_dir(tmp_path_factory):
    return tiny.marian(tmp_path_factory.mktemp("marian"))


@pytest.fixture(scope="session")
def family_dirs(tmp_path_factory, marian_dir):
    """family -> folder, built on first use (each trains for about 3 s)."""
    built = {"marian": marian_dir}

    def get(family: str):
        if family not in built:
            built[family] = tiny.FAMILIES[family](tmp_path_factory.mktemp(family))
        return built[family]

    return get
