"""The runtime's cache (``attnkit.runtime.cache``): verified checksums remembered by file identity, and
onnxruntime's optimized graphs read back on later starts, with the same translations as without it; a
changed file is hashed again (and refused), a damaged cache entry is rebuilt."""

from __future__ import annotations

import shutil

import pytest

from attnkit.errors import ExportError
from attnkit.pretrained import find_export
from attnkit.runtime import cache
from attnkit.runtime.seq2seq import OnnxTranslator

SENTENCES = ["The cat sits on the mat.", "Where is the station?", "I would like a cup of coffee."]


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNKIT_HOME", str(tmp_path / "home"))
    cache._memory.clear()
    yield tmp_path / "home" / "runtime"
    cache._memory.clear()


def _translate(folder, int8=False):
    return [r.translation for r in OnnxTranslator.from_export(folder, int8=int8).translate(SENTENCES, beam=5)]


def test_cached_graphs_translate_exactly_as_the_graphs_themselves(home, monkeypatch):
    folder = find_export("enfr-rnn")
    monkeypatch.setenv("ATTNKIT_RUNTIME_CACHE", "0")
    plain = _translate(folder, int8=True)
    assert not home.exists()
    monkeypatch.setenv("ATTNKIT_RUNTIME_CACHE", "1")
    first = _translate(folder, int8=True)  # optimizes and keeps the graphs
    kept = sorted((home / "graphs").glob("*.onnx"))
    assert len(kept) == 2 and (home / "checksums.json").is_file()
    stamps = [p.stat().st_mtime_ns for p in kept]
    opened = []
    import onnxruntime as ort

    real = ort.InferenceSession

    def spy(path, *args, **kwargs):
        opened.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(ort, "InferenceSession", spy)
    second = _translate(folder, int8=True)  # reads them back
    assert plain == first == second
    assert sorted(opened) == sorted(str(p) for p in kept)
    assert [p.stat().st_mtime_ns for p in kept] == stamps


def test_a_changed_file_is_hashed_again_and_refused(home, tmp_path):
    folder = tmp_path / "export"
    shutil.copytree(find_export("enfr-rnn"), folder)
    _translate(folder, int8=True)
    graph = folder / "step.int8.onnx"
    data = bytearray(graph.read_bytes())
    data[len(data) // 2] ^= 0xFF
    graph.write_bytes(bytes(data))
    with pytest.raises(ExportError, match="step.int8.onnx: checksum does not match"):
        _translate(folder, int8=True)


def test_a_damaged_cache_entry_is_rebuilt(home):
    folder = find_export("enfr-rnn")
    expected = _translate(folder, int8=True)
    for kept in (home / "graphs").glob("*.onnx"):
        kept.write_bytes(b"not a graph")
    assert _translate(folder, int8=True) == expected


def test_a_cache_that_cannot_be_written_is_skipped(home, monkeypatch):
    """onnxruntime failing to write the optimized graph (a full disk): the graph runs without the cache,
    with the same translations; a cache folder that cannot be made is skipped too."""
    folder = find_export("enfr-rnn")
    expected = _translate(folder, int8=True)
    for kept in (home / "graphs").glob("*.onnx"):
        kept.unlink()
    nowhere = home / "missing" / "folder" / "graph.onnx"

    def unwritable(options, target):
        options.optimized_model_filepath = str(nowhere)
        return nowhere

    monkeypatch.setattr(cache, "save_optimized", unwritable)
    assert _translate(folder, int8=True) == expected and not nowhere.exists()
    monkeypatch.undo()
    cache._memory.clear()
    monkeypatch.setenv("ATTNKIT_HOME", str(home.parent / "elsewhere"))
    (home.parent / "elsewhere" / "runtime").mkdir(parents=True)
    (home.parent / "elsewhere" / "runtime" / "graphs").write_text("a file where the folder should be")
    assert _translate(folder, int8=True) == expected


@pytest.mark.parametrize("damage", ["truncated", "missing"])
def test_kept_weights_live_beside_the_graph_and_a_damaged_weights_file_is_rebuilt(home, damage):
    """The optimized graph keeps its weights in a file of its own (onnxruntime maps it instead of
    holding a second copy); a weights file cut short or gone: the graph itself runs, and the next start
    keeps it again."""
    folder = find_export("enfr-rnn")
    expected = _translate(folder, int8=True)
    weights = sorted((home / "graphs").glob("*.data"))
    graphs = sorted((home / "graphs").glob("*.onnx"))
    assert len(weights) == 2
    assert all(w.stat().st_size > 10 * g.stat().st_size for w, g in zip(weights, graphs))
    for w in weights:
        if damage == "missing":
            w.unlink()
        else:
            w.write_bytes(w.read_bytes()[: w.stat().st_size // 3])
    assert _translate(folder, int8=True) == expected
    assert _translate(folder, int8=True) == expected and all(g.is_file() for g in graphs)
    assert all(w.stat().st_size > 10 * g.stat().st_size for w, g in zip(weights, graphs))
