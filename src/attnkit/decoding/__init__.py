"""Greedy and beam search over the step protocol both seq2seq models implement."""

from .beam import beam_search
from .common import Hypothesis, max_lengths
from .greedy import greedy_search

__all__ = ["Hypothesis", "beam_search", "greedy_search", "max_lengths"]
