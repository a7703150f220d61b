"""What a model load can remember between runs, in ``$ATTNKIT_HOME/runtime`` (default ~/.cache/attnkit):

- **checksums**: a file's SHA-256, keyed by its resolved path, size, modification time and inode, so an
  export's manifest check hashes each file once per install, not on every start (a replaced or edited
  file changes its key and is hashed again);
- **optimized graphs**: onnxruntime's own ``ORT_ENABLE_ALL`` optimization of a graph, saved by
  onnxruntime (``optimized_model_filepath``) on the first load and read back with optimizations off:
  the same graph onnxruntime would run, without re-optimizing it at every start. The key holds the
  graph's SHA-256, onnxruntime's version and this CPU's model and flags (an optimized graph may use
  instructions of the CPU it was made on).

The kept graph holds its weights in a file beside it, which onnxruntime maps into memory when it reads
the graph back instead of copying them: the default translator's peak RSS 130 -> 113 MiB
(``benchmarks/startup.py``).

Measured on 2 cores, the default translator's two int8 graphs: session start 105 + 54 ms optimizing, 17 +
24 ms from the cache. ``ATTNKIT_RUNTIME_CACHE=0`` turns both off; a cache that cannot be written (a
read-only home) is skipped silently: it only saves time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
from pathlib import Path
from typing import Any

from ..files import atomic_write_json, sha256

_memory: dict[str, str] = {}


def enabled() -> bool:
    return os.environ.get("ATTNKIT_RUNTIME_CACHE", "1") != "0"


def folder() -> Path:
    from ..store import cache_root

    return cache_root() / "runtime"


def _key(path: Path) -> str:
    st = path.stat()
    return f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}|{st.st_ino}"


def _load_checksums() -> dict[str, str]:
    if not _memory:
        with contextlib.suppress(OSError, ValueError):  # none yet, or unreadable: hash again
            _memory.update(json.loads((folder() / "checksums.json").read_text(encoding="utf-8")))
    return _memory


def checksum(path: Path) -> str:
    """``files.sha256(path)``, remembered for this file's identity (see the module docstring)."""
    if not enabled():
        return sha256(path)
    known = _load_checksums()
    key = _key(path)
    if key not in known:
        known[key] = sha256(path)
        with contextlib.suppress(OSError):  # a read-only home: hashed again next time
            folder().mkdir(parents=True, exist_ok=True)
            atomic_write_json(folder() / "checksums.json", known)
    return known[key]


def _machine() -> str:
    flags = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith(("flags", "model name", "Features")):
                    flags += line
                if line.strip() == "":
                    break
    except OSError:
        pass
    return hashlib.sha256(f"{platform.machine()}|{platform.processor()}|{flags}".encode()).hexdigest()[:16]


def optimized_graph(digest: str) -> Path | None:
    """Where the optimized form of the graph with SHA-256 ``digest`` is kept on this machine, or None when
    the cache is off."""
    if not enabled():
        return None
    import onnxruntime as ort

    return folder() / "graphs" / f"{digest[:32]}-ort{ort.__version__}-{_machine()}-external.onnx"


def save_optimized(options: Any, target: Path) -> Path | None:
    """Point ``options`` at a temporary file beside ``target`` for onnxruntime to write the optimized graph
    to; the caller renames it into place (``os.replace``) once the session opened. None: not writable."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    options.optimized_model_filepath = str(temporary)
    # Weights go to a file of their own, which onnxruntime maps into memory when it reads the graph back
    # instead of holding a second copy (default translator's peak RSS: see the module docstring). Named
    # per writer: two starts writing at once never mix their bytes; the graph names the file it uses.
    data = f"{target.stem}.{os.getpid()}.data"
    entry = "session.optimized_model_external_initializers_"
    options.add_session_config_entry(f"{entry}file_name", data)
    options.add_session_config_entry(f"{entry}min_size_in_bytes", "1024")
    return temporary
