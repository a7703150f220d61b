"""Checkpoints live in ``attnkit.checkpoint`` (the bottom layer); kept here for older imports."""

from ..checkpoint import (  # noqa: F401
    CheckpointError,
    atomic_torch_save,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    latest_checkpoint,
    load_checkpoint,
    rng_state,
    save_checkpoint,
    save_payload,
    set_rng_state,
    step_checkpoints,
)
