"""docs/architecture.md's layer list is import-linter's contract, and every module sits in a layer."""

import re
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]


def _contract_layers() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    [contract] = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [" | ".join(m.strip() for m in layer.split("|")) for layer in contract["layers"]]


def _documented_layers() -> list[str]:
    text = (ROOT / "docs" / "architecture.md").read_text()
    block = re.search(r"```layers\n(.*?)```", text, re.S)
    assert block, "docs/architecture.md has no ```layers block"
    return [line.strip() for line in block.group(1).splitlines() if line.strip()]


def test_the_documented_layers_are_the_enforced_ones():
    assert _documented_layers() == _contract_layers()


def test_every_module_belongs_to_exactly_one_layer():
    named = [m.strip() for layer in _contract_layers() for m in layer.split("|")]
    assert len(named) == len(set(named))
    package = ROOT / "src" / "attnkit"
    modules = {p.stem for p in package.glob("*.py") if not p.stem.startswith("__")}
    modules |= {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    assert {f"attnkit.{m}" for m in modules} == set(named)


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_module_imports_itself_back_counting_imports_inside_functions():
    import grimp

    graph = grimp.build_graph("attnkit")
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    assert _cycles(edges) == []
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]  # the check works


def test_no_source_file_is_over_400_lines():
    long = {
        str(p.relative_to(ROOT)): n
        for p in (ROOT / "src" / "attnkit").rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400
    }
    assert long == {}
