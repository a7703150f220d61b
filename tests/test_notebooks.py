"""Every notebook under docs/ runs, as a user would run it: Jupyter's own client (nbclient) executes a copy
on an ipykernel of this environment and fails on any error; the saved copy keeps its views (outputs that
render without a kernel)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "docs").glob("*.ipynb"))


@pytest.fixture(scope="module")
def kernel(tmp_path_factory, monkeypatch_module):
    """A kernelspec running this interpreter (the project's environment), whatever is on PATH."""
    home = tmp_path_factory.mktemp("jupyter")
    spec = home / "kernels" / "attnkit-tests"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "attnkit", "language": "python"})
    )
    monkeypatch_module.setenv("JUPYTER_PATH", str(home))
    return "attnkit-tests"


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def test_there_is_a_tutorial():
    assert ROOT / "docs" / "tutorial.ipynb" in NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_every_notebook_runs_and_its_saved_views_need_no_kernel(path, kernel, tmp_path, monkeypatch):
    notebook = nbformat.read(path, as_version=4)
    saved_views = [
        o for c in notebook.cells for o in c.get("outputs", []) if "text/html" in o.get("data", {})
    ]
    assert saved_views and all("<iframe" in o["data"]["text/html"] for o in saved_views)
    monkeypatch.chdir(tmp_path)
    client = nbclient.NotebookClient(
        notebook, timeout=600, kernel_name=kernel, resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    errors = [o for c in notebook.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
