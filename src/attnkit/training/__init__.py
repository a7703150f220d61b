"""Training: the loop, tasks, schedules, averaging, word2vec, prior correction, DDP."""
