"""Models built by injection from a typed config: ``build_model(config.model, vocab_size)``."""

from .build import build_model
from .outputs import Seq2SeqOutput
from .registry import MODELS, ModelSpec, register_model
from .rnn_seq2seq import RNNSeq2Seq

__all__ = ["MODELS", "ModelSpec", "RNNSeq2Seq", "Seq2SeqOutput", "build_model", "register_model"]
