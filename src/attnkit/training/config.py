"""The typed config lives in ``attnkit.config`` (the bottom layer); kept here for older imports."""

from ..config import (  # noqa: F401
    ConfigError,
    DataConfig,
    ExperimentConfig,
    HANConfig,
    ModelConfig,
    RNNConfig,
    TrainingConfig,
    TransformerConfig,
    apply_override,
    from_dict,
    load_config,
    to_dict,
    validate,
)
