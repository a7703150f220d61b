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
