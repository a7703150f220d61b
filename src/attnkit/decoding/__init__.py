"""Greedy and beam search for torch models: ``attnkit.search`` (NumPy, one implementation for torch and
ONNX) driven through ``TorchStepper``."""

from .common import Hypothesis, TorchStepper, beam_search, greedy_search, max_lengths

__all__ = ["Hypothesis", "TorchStepper", "beam_search", "greedy_search", "max_lengths"]
