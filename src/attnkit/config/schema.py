"""The experiment's typed sections: data, model (a name and that model's own options), training."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ..names import MODEL_TABLE, SECTION_NAMES, SECTIONS, resolve


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
    """A model's name and its own options: the dataclass its entry in ``names.MODEL_TABLE`` names, in the
    torch-free ``models.options`` (``RNNConfig``, ``TransformerConfig``, ...).
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
