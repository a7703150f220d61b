"""Metrics people report: BLEU/chrF (sacrebleu), attention entropy, AER, accuracy/F1, speed, memory."""
