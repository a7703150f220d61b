"""The builds the contract suites share: each translation backend tests can build, made once a session."""

from __future__ import annotations

import pytest

from attnkit.api import load_translator


@pytest.fixture(scope="session")
def specs(translator_ckpt, transformer_ckpt, tmp_path_factory):
    """Each build's (model reference, --backend, --int8) as a user gives it (made lazily, once)."""
    cache: dict[str, tuple[str, str, bool]] = {}

    def get(build: str) -> tuple[str, str, bool]:
        if build not in cache:
            kind, _, model = build.partition("-")
            checkpoint = str(translator_ckpt if model == "rnn" else transformer_ckpt)
            if kind == "hf":
                pytest.importorskip("transformers")
                from tests.hf import tiny

                family = tiny.FAMILIES[model]
                cache[build] = (str(family(tmp_path_factory.mktemp(f"combo-{model}"))), "auto", False)
            elif kind == "torch":
                cache[build] = (checkpoint, "torch", False)
            else:
                from attnkit.export import export

                folder = tmp_path_factory.mktemp(f"combo-{build}") / "onnx"
                export(checkpoint, folder, int8=kind == "onnx8")
                cache[build] = (str(folder), "onnx", kind == "onnx8")
        return cache[build]

    return get


@pytest.fixture(scope="session")
def built(specs):
    """Each build's translator (loaded once)."""
    cache: dict[str, object] = {}

    def get(build: str):
        if build not in cache:
            spec, backend, int8 = specs(build)
            cache[build] = load_translator(spec, backend=backend, int8=int8)
        return cache[build]

    return get
