"""Both seq2seq models: step protocol, cached == full, teacher forcing == stepping, overfitting."""

import pytest
import torch
import torch.nn.functional as F

from attnkit.data.batching import make_batch
from attnkit.models.output import IGNORE
from tests.helpers import VOCAB, random_sequences, tiny_rnn, tiny_transformer

MODELS = {
    "rnn-bahdanau-feed": lambda: tiny_rnn("additive", True),
    "rnn-luong-general": lambda: tiny_rnn("general", False),
    "rnn-dot-lstm": lambda: tiny_rnn("dot", True, "lstm"),
    "transformer": tiny_transformer,
}


def _batch():
    src = random_sequences(3, seed=1)
    return make_batch(src, random_sequences(3, seed=2))


@pytest.mark.parametrize("name", MODELS)
def test_stepping_equals_teacher_forced_forward(name):
    model = MODELS[name]().eval()
    b = _batch()
    full = (
        model(b.src, b.src_mask, b.tgt_in, need_attention=True)
        if name == "transformer"
        else model(b.src, b.src_mask, b.tgt_in)
    )
    state = model.encode(b.src, b.src_mask)
    steps, maps = [], []
    for t in range(b.tgt_in.shape[1]):
        lp, state, attn = model.step(b.tgt_in[:, t : t + 1], state)
        steps.append(lp)
        maps.append(attn)
    stepped = torch.stack(steps, 1)  # (B, T, V)
    ref = torch.log_softmax(full.logits, -1)
    torch.testing.assert_close(stepped, ref, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(torch.cat(maps, 1), full.attention, atol=1e-6, rtol=1e-5)
    assert full.attention.shape == (3, b.tgt_in.shape[1], b.src.shape[1])
    assert (full.attention.masked_select(~b.src_mask.unsqueeze(1).expand_as(full.attention)) == 0).all()


def test_transformer_returns_every_layer_and_head():
    model = tiny_transformer().eval()
    b = _batch()
    out = model(b.src, b.src_mask, b.tgt_in, all_layers=True)
    assert len(out.layer_attention) == 2 and out.layer_attention[0].shape == (
        3,
        2,
        b.tgt_in.shape[1],
        b.src.shape[1],
    )
    torch.testing.assert_close(out.attention, out.layer_attention[-1].mean(1))


@pytest.mark.parametrize("name", MODELS)
def test_overfits_reverse_task(name):
    torch.manual_seed(0)
    model = MODELS[name]()
    src = random_sequences(16, seed=3, max_len=5)
    b = make_batch(src, [list(reversed(s)) for s in src])
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    for _ in range(150):
        logits = model(b.src, b.src_mask, b.tgt_in).logits
        loss = F.cross_entropy(
            logits.reshape(-1, logits.shape[-1]),
            model.output.targets(b.tgt_out).reshape(-1),
            ignore_index=IGNORE,
        )
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    logits = model(b.src, b.src_mask, b.tgt_in).logits
    pred = model.output.target_ids[logits.argmax(-1)]
    accuracy = (pred == b.tgt_out)[b.tgt_mask].float().mean()
    assert accuracy > 0.95, f"{name} reached only {accuracy:.2f} token accuracy"


def test_target_vocabulary_restriction_maps_ids_both_ways():
    model = tiny_rnn()
    assert model.output.target_ids.numel() == VOCAB
    from attnkit.models.rnn_seq2seq import RNNSeq2Seq

    small = RNNSeq2Seq(VOCAB, 8, 8, target_ids=[3, 5, 7])
    assert small.output.targets(torch.tensor([5, 4])).tolist() == [1, IGNORE]
    assert small.output(torch.zeros(2, 8)).shape == (2, 3)
    assert small.output.target_ids.tolist() == [3, 5, 7]


def test_unknown_rnn_type_and_scorer_list_valid_names():
    from attnkit.models.rnn_seq2seq import RNNSeq2Seq

    with pytest.raises(ValueError, match="valid: gru, lstm"):
        RNNSeq2Seq(VOCAB, rnn_type="rnn")
    with pytest.raises(ValueError, match="valid names"):
        RNNSeq2Seq(VOCAB, scorer="nope")


@pytest.mark.parametrize("kind", ["rnn", "transformer"])
def test_separate_source_vocabulary_gets_its_own_table(kind):
    """Source ids may exceed the target vocabulary; the output is tied to the target table only."""
    from attnkit.config import ModelConfig
    from attnkit.models import build_model

    config = ModelConfig(name=kind)
    sizes = {"rnn": {"embed_size": 16, "hidden_size": 16}, "transformer": {"d_model": 16, "ff_size": 32}}
    for key, value in sizes[kind].items():
        setattr(config.options, key, value)
    torch.manual_seed(0)
    model = build_model(config, VOCAB, src_vocab_size=VOCAB + 40).eval()
    assert model.src_embedding.num_embeddings == VOCAB + 40 and model.embedding.num_embeddings == VOCAB
    src = [[VOCAB + 30, VOCAB + 39, 5], [7]]  # ids only the source table has
    b = make_batch(src, random_sequences(2, seed=3))
    out = model(b.src, b.src_mask, b.tgt_in)
    assert out.logits.shape == (2, b.tgt_in.shape[1], VOCAB)
    joint = build_model(config, VOCAB)
    assert joint.src_embedding is None and "src_embedding.weight" not in joint.state_dict()
