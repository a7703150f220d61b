"""Typed experiment configuration: dataclasses are the truth, YAML mirrors them strictly.

An unknown key anywhere is an error naming it (with the valid keys); ``--set a.b=v`` overrides a
field with a value parsed as YAML and checked against the field's type.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

from .errors import ConfigError
from .log import log
from .names import MODEL_TABLE, MODEL_TASKS, SECTION_NAMES, SECTIONS, TASKS, resolve


@dataclass
class DataConfig:
    dataset: str = (
        "tatoeba-eng-fra"  # a shipped dataset (tatoeba-eng-fra, reviews), used when no paths are given
    )
    train: list[str] = field(default_factory=list)  # [tsv] or [src, tgt]
    dev: list[str] = field(default_factory=list)
    vocab_size: int = 8000  # per sentencepiece model
    vocabulary: str = "joint"  # joint: one subword model for both sides; separate: one per side
    max_tokens: int = 4096
    max_len: int = 100
    skip_bad_lines: bool = False
    train_limit: int = 0  # 0 = all training pairs
    text_field: str = "text"  # documents (HAN)
    label_field: str = "label"
    title_field: str = "title"  # prepended to the text as its first sentence; "" to ignore
    min_freq: int = 2
    # sentencepiece subword regularization (Kudo 2018): each epoch samples a new segmentation of the
    # training pairs from the unigram model, sharpened by this alpha (smaller = more varied); 0 = off
    subword_alpha: float = 0.0
    # captioning on the generated digit strings (dataset: digits): new images per epoch, dev images
    images_per_epoch: int = 20000
    dev_images: int = 1000
    batch_images: int = 64


@dataclass
class ModelConfig:
    """A model's name and its own options: the dataclass its entry in ``names.MODEL_TABLE`` names, defined
    beside the model (``models.rnn_seq2seq.RNNConfig``, ``models.transformer.TransformerConfig``, ...).
    YAML and stored configs keep the options under the model's section (``model: {name: rnn, rnn: {...}}``),
    and ``config.model.rnn`` reads them by that name too; another model's section is an error."""

    name: str = "rnn"  # rnn, transformer, han, captioner, hard_captioner
    options: Any = None  # the model's options dataclass; None = its defaults

    def __post_init__(self) -> None:
        if self.options is None:
            self.options = options_class(self.name)()

    @property
    def section(self) -> str:
        """The name of the section that configures this model."""
        return SECTIONS.get(self.name, self.name)

    def __setattr__(self, key: str, value: Any) -> None:
        """Naming another model gives it its own options (defaults) unless it shares the section."""
        old = self.__dict__.get("name")
        super().__setattr__(key, value)
        if key == "name" and old is not None and SECTIONS.get(old, old) != SECTIONS.get(value, value):
            super().__setattr__("options", options_class(value)())

    def __getattr__(self, key: str) -> Any:  # only reached when ordinary lookup fails
        name = str(self.__dict__.get("name"))
        own = SECTIONS.get(name, name)
        if key == own and "options" in self.__dict__:
            return self.__dict__["options"]
        if key in SECTION_NAMES:
            raise AttributeError(f"the {name} model is configured by model.{own}, not model.{key}")
        raise AttributeError(key)


def options_class(name: str) -> Any:
    """The options dataclass of model ``name`` (imported on first use); unknown names list the valid ones."""
    if name not in MODEL_TABLE:
        raise ConfigError(f"model.name: unknown value {name!r}; valid: {', '.join(sorted(MODEL_TABLE))}")
    return resolve(MODEL_TABLE[name].config)


def check_ranges(
    options: Any, where: str, positive: tuple[str, ...] = (), fractions: tuple[str, ...] = ()
) -> None:
    """ConfigError naming the first field of ``options`` that is not > 0 (``positive``) or not in [0, 1)
    (``fractions``): a typo is one line naming the field, not torch's words from deep inside a model."""
    for name in positive:
        if not getattr(options, name) > 0:
            raise ConfigError(f"{where}{name} must be > 0, got {getattr(options, name)!r}")
    for name in fractions:
        if not 0.0 <= getattr(options, name) < 1.0:
            raise ConfigError(f"{where}{name} must be in [0, 1), got {getattr(options, name)!r}")


@dataclass
class TrainingConfig:
    out_dir: str = "runs/default"
    # start from the weights of this checkpoint or shipped model (same model config; its tokenizer and
    # vocabulary are reused); optimizer, schedule and data position start afresh. "" = random init
    init_from: str = ""
    seed: int = 1
    threads: int = 2
    device: str = "auto"  # auto (CUDA when present), cpu, cuda, cuda:N
    precision: str = "fp32"  # fp32, or bf16: bf16 autocast of the forward pass on a GPU (fp32 on a CPU)
    lr: float = 1e-3
    betas: list[float] = field(default_factory=lambda: [0.9, 0.98])
    weight_decay: float = 0.0
    schedule: str = "inverse_sqrt"  # constant, inverse_sqrt, plateau, linear (to 0 at max_steps)
    warmup_steps: int = 200
    plateau_factor: float = 0.5
    plateau_patience: int = 2
    label_smoothing: float = 0.1
    clip_grad_norm: float = 1.0
    accumulate: int = 1
    max_epochs: int = 100
    max_steps: int = 0  # 0 = no limit
    max_minutes: float = 0.0  # wall-clock budget from process start; 0 = no limit
    validate_every: int = 500  # steps
    checkpoint_every: int = 0  # steps; 0 = only at validations
    snapshot_minutes: list[float] = field(default_factory=list)  # also keep minutes-M.pt at these times
    validate_bleu: bool = True
    dev_limit: int = 0  # 0 = the whole dev set
    patience: int = 0  # validations without improvement before stopping; 0 = never
    keep_last: int = 2
    log_every: int = 50  # steps between progress lines in the log when the progress bar is off
    progress: bool = True
    # captioning: lambda of the doubly stochastic attention penalty (Xu et al. 2015, eq. 14); hard
    # attention's REINFORCE weight and entropy bonus (sec. 4.1)
    attention_penalty: float = 0.0
    reinforce_weight: float = 1.0
    entropy_weight: float = 0.001
    # captioning: a torchvision state dict file for model.captioner.backbone's ImageNet weights (read as
    # data; nothing is downloaded)
    backbone_weights: str = ""
    # classification (HAN): the loss's class weights: none, inverse, sqrt_inverse, quarter_inverse
    class_weighting: str = "sqrt_inverse"
    # > 0: initialise the word embeddings with skip-gram vectors trained this many epochs on the training
    # documents first (Yang et al. 2016, sec. 3.3); 0 = random init
    word2vec_epochs: int = 0
    # or: the vectors an earlier run trained (its out_dir/word2vec.pt), same vocabulary; lets the members of
    # an ensemble share one word2vec run
    word2vec_vectors: str = ""
    # "wordllama": initialise from WordLlama's shipped token embeddings instead (training.wordllama; needs
    # the wordllama package); "none" = word2vec or random
    pretrained_vectors: str = "none"


@dataclass
class ExperimentConfig:
    name: str = "experiment"
    task: str = "translation"  # translation, classification, captioning
    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    training: TrainingConfig = field(default_factory=TrainingConfig)


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
        raise ConfigError(f"{where or 'config'}: expected a mapping, got {data!r}")
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
    only (``ModelConfig.section``): the other sections are options its model never reads, and
    ``from_dict`` fills them back with their defaults."""
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


SHIPPED_CONFIGS = Path(__file__).parent / "configs"


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


def validate(config: ExperimentConfig) -> None:
    """Cross-field checks with messages that say what is valid; the model's options check themselves."""
    t = config.training
    choices = {
        "task": (config.task, TASKS),
        "data.vocabulary": (config.data.vocabulary, ("joint", "separate")),
        "training.precision": (t.precision, ("bf16", "fp32")),
        "training.schedule": (t.schedule, ("constant", "inverse_sqrt", "linear", "plateau")),
        "training.pretrained_vectors": (t.pretrained_vectors, ("none", "wordllama")),
        "training.class_weighting": (
            t.class_weighting,
            ("inverse", "none", "quarter_inverse", "sqrt_inverse"),
        ),
    }
    for key, (value, valid) in choices.items():
        if value not in valid:
            raise ConfigError(f"{key}: unknown value {value!r}; valid: {', '.join(valid)}")
    if MODEL_TASKS[config.model.name] != config.task:
        fits = ", ".join(n for n, t in MODEL_TASKS.items() if t == config.task)
        raise ConfigError(f"model.name: {config.model.name!r} is not a {config.task} model; valid: {fits}")
    config.model.options.validate(f"model.{config.model.section}.")
    if not 0.0 <= config.data.subword_alpha <= 1.0:
        raise ConfigError(f"data.subword_alpha must be in [0, 1] (0 = off), got {config.data.subword_alpha}")
    if t.schedule == "linear" and t.max_steps <= 0:
        raise ConfigError("training.schedule linear decays to 0 at training.max_steps: set max_steps > 0")
    _check_vectors(t)
    _check_ranges(config)
    if config.data.train and len(config.data.train) not in (1, 2):
        raise ConfigError("data.train must be [tsv] or [src, tgt]")
    if t.backbone_weights and not getattr(config.model.options, "backbone", ""):
        raise ConfigError("training.backbone_weights needs model.captioner.backbone (resnet18 or resnet34)")


def _check_vectors(t: TrainingConfig) -> None:
    """The HAN's initial word vectors: at most one source."""
    if t.word2vec_epochs < 0:
        raise ConfigError(f"training.word2vec_epochs must be >= 0 (0 = off), got {t.word2vec_epochs}")
    if t.word2vec_epochs and t.word2vec_vectors:
        raise ConfigError("set training.word2vec_epochs (train) or word2vec_vectors (reuse), not both")
    if t.pretrained_vectors != "none" and (t.word2vec_epochs or t.word2vec_vectors):
        raise ConfigError("set training.pretrained_vectors or word2vec_epochs / word2vec_vectors, not both")


# Fields that must be positive (> 0) or non-negative (>= 0); checked where the config is read, so a typo
# is one line naming the field instead of torch's words from deep inside a model.
POSITIVE = [
    "data.vocab_size",
    "data.max_tokens",
    "data.max_len",
    "data.images_per_epoch",
    "data.dev_images",
    "data.batch_images",
    "training.threads",
    "training.accumulate",
    "training.max_epochs",
    "training.keep_last",
    "training.log_every",
    "data.min_freq",
]
NON_NEGATIVE = [
    "training.lr",  # 0 freezes the weights: a test of init_from uses it
    "data.train_limit",
    "training.weight_decay",
    "training.warmup_steps",
    "training.max_steps",
    "training.max_minutes",
    "training.validate_every",
    "training.checkpoint_every",
    "training.dev_limit",
    "training.patience",
    "training.clip_grad_norm",
    "training.plateau_patience",
    "training.attention_penalty",
    "training.reinforce_weight",
    "training.entropy_weight",
]
FRACTIONS = ["training.label_smoothing"]


def _field(config: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        config = getattr(config, part)
    return config


def _check_ranges(config: ExperimentConfig) -> None:
    for name in POSITIVE:
        if not _field(config, name) > 0:
            raise ConfigError(f"{name} must be > 0, got {_field(config, name)!r}")
    for name in NON_NEGATIVE:
        if not _field(config, name) >= 0:
            raise ConfigError(f"{name} must be >= 0 (0 = off), got {_field(config, name)!r}")
    for name in FRACTIONS:
        if not 0.0 <= _field(config, name) < 1.0:
            raise ConfigError(f"{name} must be in [0, 1), got {_field(config, name)!r}")
    if not 0.0 < config.training.plateau_factor < 1.0:
        raise ConfigError(f"training.plateau_factor must be in (0, 1), got {config.training.plateau_factor}")
    if len(config.training.betas) != 2 or not all(0.0 <= b < 1.0 for b in config.training.betas):
        raise ConfigError(f"training.betas must be two numbers in [0, 1), got {config.training.betas}")
