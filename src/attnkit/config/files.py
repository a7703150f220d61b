"""Configs as data: strict YAML, ``--set`` overrides, dicts <-> dataclasses, and older layouts brought up
to date (``upgrade``)."""

from __future__ import annotations

import dataclasses
import types
import typing
from pathlib import Path
from typing import Any, TypeVar

import yaml

from ..errors import ConfigError
from ..log import log
from ..names import SECTION_NAMES, SECTIONS
from .checks import validate
from .schema import ExperimentConfig, ModelConfig, options_class

C = TypeVar("C")


class _StrictLoader(yaml.SafeLoader):
    """YAML's safe loader, except that a key given twice in one mapping is an error naming its line
    (plain YAML keeps the last one and silently drops the first section)."""


def _mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
        if key in seen:
            line = key_node.start_mark.line + 1
            raise ConfigError(
                f"{key_node.start_mark.name}:{line}: key {key!r} given twice (first on line {seen[key]})"
            )
        seen[key] = key_node.start_mark.line + 1
    return dict(loader.construct_mapping(node, deep=deep))


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)  # type: ignore[arg-type]


def _check_type(where: str, value: Any, hint: Any) -> Any:
    origin = typing.get_origin(hint)
    if origin is list:
        if not isinstance(value, list):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        (item,) = typing.get_args(hint)
        return [_check_type(f"{where}[{i}]", v, item) for i, v in enumerate(value)]
    if origin in (typing.Union, types.UnionType):
        return value
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint in (int, float, str, bool) and (
        not isinstance(value, hint) or (hint is int and isinstance(value, bool))
    ):
        raise ConfigError(f"{where}: expected {hint.__name__}, got {value!r}")
    return value


def from_dict(cls: type[C], data: dict[str, Any], where: str = "") -> C:
    """Build dataclass ``cls`` from a mapping; unknown keys raise ConfigError naming them."""
    if cls is ModelConfig:
        return _model_from_dict(data, where)  # type: ignore[return-value]
    if not isinstance(data, dict):
        raise ConfigError(f"{where.rstrip('.') or 'config'}: expected a mapping, got {data!r}")
    hints = typing.get_type_hints(cls)
    fields = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - fields)
    if unknown:
        raise ConfigError(
            f"unknown config key {where + unknown[0]!r}; valid keys here: {', '.join(sorted(fields))}"
        )
    values: dict[str, Any] = {}
    for key, value in data.items():
        hint = hints[key]
        if hint is ModelConfig:
            values[key] = _model_from_dict(value, f"{where}{key}.")
        elif dataclasses.is_dataclass(hint):
            values[key] = from_dict(hint, value, f"{where}{key}.")  # type: ignore[arg-type]
        else:
            values[key] = _check_type(where + key, value, hint)
    return cls(**values)


def _model_from_dict(data: Any, where: str) -> ModelConfig:
    """``{name: rnn, rnn: {...}}`` -> ModelConfig(name, RNNConfig(...)); a section of another model is an
    error naming it (its options would be read by nothing)."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where.rstrip('.') or 'model'}: expected a mapping, got {data!r}")
    name = _check_type(f"{where}name", data.get("name", "rnn"), str)
    options_cls = options_class(name)
    section = SECTIONS.get(name, name)
    for key in sorted(set(data) - {"name", section}):
        if key in SECTION_NAMES:
            raise ConfigError(
                f"{where}{key}: the {name} model reads {where}{section} only; remove {where}{key} "
                f"or set {where}name"
            )
        raise ConfigError(f"unknown config key {where + key!r}; valid keys here: name, {section}")
    return ModelConfig(name, from_dict(options_cls, data.get(section) or {}, f"{where}{section}."))


def to_dict(config: Any) -> dict[str, Any]:
    """A config as plain data, as checkpoints and exports store it. A model config keeps its own section
    only (``ModelConfig.section``), the layout ``from_dict`` reads back."""
    data = dataclasses.asdict(config)
    if isinstance(config, ModelConfig):
        return _own_section(config, data)
    if isinstance(config, ExperimentConfig):
        data["model"] = _own_section(config.model, data["model"])
    return data


def _own_section(model: ModelConfig, data: dict[str, Any]) -> dict[str, Any]:
    return {"name": data["name"], model.section: data["options"]}


# Options that moved from a model's section to ``training`` in 0.2 (read by training, never by the model).
MOVED_TO_TRAINING = {
    "han": ("class_weighting", "word2vec_epochs", "word2vec_vectors", "pretrained_vectors"),
    "captioner": ("backbone_weights",),
}


def upgrade(data: dict[str, Any], stored: bool = False) -> list[str]:
    """Bring an experiment mapping written for an older attnkit up to date, in place; returns the keys
    that moved ("model.han.class_weighting -> training.class_weighting"). ``stored``: a checkpoint's or
    an export's config, where older versions also kept every other model's section (dropped here)."""
    model = data.get("model")
    name = model.get("name", "rnn") if isinstance(model, dict) else None
    if not isinstance(model, dict) or not isinstance(name, str):
        return []
    section = SECTIONS.get(name, name)
    if stored:
        for other in set(SECTION_NAMES) - {section}:
            model.pop(other, None)
    options, training = model.get(section), data.setdefault("training", {})
    if not isinstance(options, dict) or not isinstance(training, dict):
        return []
    moved = []
    for key in MOVED_TO_TRAINING.get(section, ()):
        if key not in options:
            continue
        if key in training and not stored:  # a stored member's own value wins over the ensemble's
            raise ConfigError(f"model.{section}.{key} is training.{key} now: give it there only")
        training[key] = options.pop(key)
        moved.append(f"model.{section}.{key} -> training.{key}")
    return moved


def apply_override(data: dict[str, Any], assignment: str) -> None:
    """Apply ``a.b.c=value`` (value parsed as YAML) to a nested dict, in place."""
    if "=" not in assignment:
        raise ConfigError(f"--set expects key=value, got {assignment!r}")
    key, raw = assignment.split("=", 1)
    parts = key.strip().split(".")
    node = data
    for part in parts[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ConfigError(f"--set {key}: {part!r} is not a section")
    node[parts[-1]] = yaml.safe_load(raw)


SHIPPED_CONFIGS = Path(__file__).parent.parent / "configs"


def shipped_configs() -> list[str]:
    """Names of the example configs shipped in the package (``attnkit train NAME``)."""
    return sorted(p.stem for p in SHIPPED_CONFIGS.glob("*.yaml"))


def config_path(path: str | Path) -> Path:
    """A config file, or the name of a shipped one (``toy-copy`` -> the package's toy-copy.yaml)."""
    given = Path(path)
    if given.exists() or given.suffix or len(given.parts) > 1:
        return given
    if (SHIPPED_CONFIGS / f"{given}.yaml").is_file():
        return SHIPPED_CONFIGS / f"{given}.yaml"
    raise ConfigError(
        f"no config file {path} and no shipped config of that name: {', '.join(shipped_configs())}"
    )


def _relative_to(data: dict[str, Any], folder: Path) -> None:
    """Data files named in a config file resolve against the config file's folder (as a config's
    ``include`` would), so a config works from any current folder; ``--set`` paths stay as given."""
    section = data.get("data")
    if not isinstance(section, dict):
        return
    for key in ("train", "dev"):
        files = section.get(key)
        if isinstance(files, list):
            section[key] = [
                str(folder / f) if isinstance(f, str) and not Path(f).is_absolute() else f for f in files
            ]


def load_config(path: str | Path | None = None, overrides: list[str] | None = None) -> ExperimentConfig:
    """Load a YAML experiment strictly (a file, or the name of a shipped config), then apply
    ``key=value`` overrides. Data files in the file resolve against its folder; ``out_dir`` against the
    current folder (where runs are written)."""
    data: dict[str, Any] = {}
    if path is not None:
        path = config_path(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read config {path}: {exc.strerror}") from None
        except UnicodeDecodeError as exc:
            line = Path(path).read_bytes()[: exc.start].count(b"\n") + 1
            raise ConfigError(
                f"{path}:{line}: not UTF-8 text (byte {exc.start}); save the config as UTF-8"
            ) from None
        try:
            data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 (a SafeLoader subclass)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: invalid YAML: {exc}") from None
        except ConfigError as exc:  # a duplicate key: name the file instead of YAML's "<unicode string>"
            raise ConfigError(str(exc).replace("<unicode string>", str(path))) from None
        if data is None:
            raise ConfigError(f"{path}: the config is empty (see configs/ for complete examples)")
        if isinstance(data, dict):
            _relative_to(data, path.absolute().parent)
    for assignment in overrides or []:
        apply_override(data, assignment)
    if isinstance(data, dict):
        for moved in upgrade(data):
            log.warning(f"{path or '--set'}: {moved} (its place since attnkit 0.2; read from the old one)")
    config = from_dict(ExperimentConfig, data)
    validate(config)
    return config
