"""Typed experiment configuration: dataclasses are the truth, YAML mirrors them strictly.

An unknown key anywhere is an error naming it (with the valid keys); ``--set a.b=v`` overrides a
field with a value parsed as YAML and checked against the field's type.

``schema`` holds the sections (each model's own options are in ``models.options``), ``files`` reads and writes
them, ``checks`` validates them. Torch-free: a model's options class is imported when a config names it.
"""

from ..errors import ConfigError
from .checks import validate
from .files import (
    MOVED_TO_TRAINING,
    SHIPPED_CONFIGS,
    apply_override,
    config_path,
    from_dict,
    load_config,
    shipped_configs,
    to_dict,
    upgrade,
)
from .schema import (
    DataConfig,
    ExperimentConfig,
    ModelConfig,
    TrainingConfig,
    check_ranges,
    options_class,
)

__all__ = [
    "MOVED_TO_TRAINING",
    "SHIPPED_CONFIGS",
    "ConfigError",
    "DataConfig",
    "ExperimentConfig",
    "ModelConfig",
    "TrainingConfig",
    "apply_override",
    "check_ranges",
    "config_path",
    "from_dict",
    "load_config",
    "options_class",
    "shipped_configs",
    "to_dict",
    "upgrade",
    "validate",
]
