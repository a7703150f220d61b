"""Reading and validating parallel text and documents, subword tokenization, batching by tokens."""

from .batching import Batch, TokenBatcher
from .parallel import DataError, normalize, read_parallel
from .tokenizer import SubwordTokenizer

__all__ = ["Batch", "DataError", "SubwordTokenizer", "TokenBatcher", "normalize", "read_parallel"]
