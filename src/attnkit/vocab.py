"""The special token ids every attnkit subword vocabulary uses (the ones JoeyNMT uses too)."""

UNK, PAD, BOS, EOS = 0, 1, 2, 3
# The padding id of the HAN's word vocabulary (``data.documents.Vocabulary``: 0 = <pad>, 1 = <unk>).
WORD_PAD = 0
