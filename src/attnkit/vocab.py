"""The special token ids every attnkit subword vocabulary uses (the ones JoeyNMT uses too)."""

UNK, PAD, BOS, EOS = 0, 1, 2, 3
