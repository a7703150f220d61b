"""Models built by injection from a typed config: ``build_model(config.model, vocab_size)``."""

from .build import MODELS, build_model
from .outputs import Seq2SeqOutput
from .rnn_seq2seq import RNNSeq2Seq

__all__ = ["MODELS", "RNNSeq2Seq", "Seq2SeqOutput", "build_model"]
