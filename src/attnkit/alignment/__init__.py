"""How alignment works, in one place: word links read off a translator's attention (or a map derived
from it) under forced decoding.

- ``links``: subword rows -> word matrices, links by argmax / intersect / threshold / union, the two
  directions symmetrized (mean, grow-diag-final, ...), gold links (NAACL) and AER with its interval;
- ``aligner``: ``align_corpus`` over a corpus, one or two translators -> ``AlignmentReport``;
- ``attnkit.aligning`` (the Python API, ``attnkit.align``): the one entry point with the shipped
  defaults (``pretrained.records``), used by ``attnkit align``, ``/api/align`` and the scripts.
"""
