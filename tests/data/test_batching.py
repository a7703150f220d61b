"""Token batching: budget, little padding, determinism per (seed, epoch), sharding."""

from attnkit.data.batching import TokenBatcher, make_batch
from attnkit.data.tokenizer import BOS, EOS, PAD
from tests.helpers import random_sequences


def _batcher(max_tokens=60):
    src = random_sequences(300, seed=1, max_len=12)
    tgt = random_sequences(300, seed=2, max_len=12)
    return TokenBatcher(src, tgt, max_tokens=max_tokens, seed=3, pool_batches=10)


def test_batches_respect_budget_and_cover_every_pair_once():
    b = _batcher()
    plan = b.plan(0)
    assert sorted(i for batch in plan for i in batch) == list(range(300))
    for batch in plan:
        longest = max(max(len(b.src[i]), len(b.tgt[i])) + 1 for i in batch)
        assert longest * len(batch) <= 60 or len(batch) == 1


def test_bucketing_keeps_padding_low():
    b = _batcher(max_tokens=200)
    real = padded = 0
    for batch in b.batches(0):
        real += int(batch.src_mask.sum())
        padded += batch.src_mask.numel()
    assert real / padded > 0.8


def test_plan_is_a_function_of_seed_and_epoch():
    assert _batcher().plan(1) == _batcher().plan(1)
    assert _batcher().plan(1) != _batcher().plan(2)


def test_shards_of_two_ranks_make_the_global_batch():
    b = _batcher()
    whole = list(b.batches(0))
    r0, r1 = list(b.batches(0, rank=0, world_size=2)), list(b.batches(0, rank=1, world_size=2))
    assert len(whole) == len(r0) == len(r1)

    def rows(batch):
        return [tuple(int(t) for t in row if t != PAD) for row in batch.src.tolist()]

    for k, batch in enumerate(whole):  # every global batch is exactly its two shards, sentence for sentence
        if len(rows(batch)) > 1:
            assert sorted(rows(batch)) == sorted(rows(r0[k]) + rows(r1[k]))
        else:  # a one-sentence batch: each rank gets that sentence (every rank needs a batch)
            assert rows(r0[k]) == rows(r1[k]) == rows(batch)


def test_make_batch_layout():
    batch = make_batch([[5, 6], [7]], [[8], [9, 10]])
    assert batch.src.tolist() == [[5, 6, EOS], [7, EOS, PAD]]
    assert batch.tgt_in.tolist() == [[BOS, 8, PAD], [BOS, 9, 10]]
    assert batch.tgt_out.tolist() == [[8, EOS, PAD], [9, 10, EOS]]
    assert batch.n_tokens == 5 + 5
