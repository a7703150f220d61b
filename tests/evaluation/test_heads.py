"""Head masking, the head report and ``attnkit heads``."""

import json

import pytest
import torch

from attnkit.attention import MultiHeadAttention
from attnkit.cli.main import main
from attnkit.errors import UsageError
from attnkit.evaluation.heads import all_heads, head_report, masked_heads


def test_masking_all_heads_but_one_equals_that_head_alone():
    torch.manual_seed(0)
    attention = MultiHeadAttention(16, 4).eval()
    query, memory = torch.randn(2, 3, 16), torch.randn(2, 5, 16)
    _, weights = attention(query, memory, memory)
    values = attention.value_outputs(attention.project_kv(memory, memory).value)  # (B, H, S, D)
    alone = torch.einsum("bts,bsd->btd", weights[:, 2], values[:, 2]) + attention.out_proj.bias
    attention.head_gate = torch.tensor([0.0, 0.0, 1.0, 0.0])
    for need_weights in (True, False):  # the eager and the fused path
        masked, _ = attention(query, memory, memory, need_weights=need_weights)
        assert torch.allclose(masked, alone, atol=1e-6)


@pytest.fixture(scope="module")
def transformer(transformer_ckpt):
    from attnkit.api import load_translator

    return load_translator(str(transformer_ckpt), backend="torch")


def test_masked_heads_restores_every_gate_and_checks_ranges(transformer):
    model = transformer.model
    assert len(all_heads(model)) == 3 * 2 * 2  # encoder, decoder, cross x 2 layers x 2 heads
    with masked_heads(model, [("cross", 1, 0), ("encoder", 0, 1)]):
        assert model.decoder[1].cross_attn.head_gate.tolist() == [0.0, 1.0]
    assert all(m.self_attn.head_gate is None for m in model.encoder)
    assert model.decoder[1].cross_attn.head_gate is None
    with pytest.raises(UsageError, match="head 2 out of range 0..1"), masked_heads(model, [("cross", 0, 2)]):
        pass


def test_head_report_masks_heads_and_prunes_in_order(transformer):
    sources, refs = ["the cat sat .", "a dog ."], ["le chat .", "un chien ."]
    report = head_report(transformer, sources, refs, beam=1, steps=3)
    assert len(report["heads"]) == 12 and report["pruning"][0]["pruned"] == 0
    assert report["pruning"][0]["loss"] == report["baseline"]["loss"]
    assert report["pruning"][-1]["pruned"] == 12
    row = report["heads"][0]
    with masked_heads(transformer.model, [(row["part"], row["layer"], row["head"])]):
        from attnkit.evaluation.heads import corpus_loss

        loss = corpus_loss(transformer, *transformer.pair_ids(sources, refs))
    assert row["loss"] == pytest.approx(loss, abs=1e-4)
    assert all(0.0 < r["confidence"] <= 1.0 for r in report["heads"])
    assert [s["layer"] for s in report["sinks"]["cross"]] == [0, 1]
    assert all(s["eos"] is None for s in report["sinks"]["decoder"])


def test_heads_command_writes_json_and_refuses_an_rnn(tmp_path, transformer_ckpt, translator_ckpt, capsys):
    src, ref = tmp_path / "src.txt", tmp_path / "ref.txt"
    src.write_text("the cat sat .\n")
    ref.write_text("le chat .\n")
    out = tmp_path / "heads.json"
    args = ["heads", str(transformer_ckpt), "--src", str(src), "--ref", str(ref), "--steps", "2"]
    assert main([*args, "--out", str(out), "--plot", str(tmp_path / "heads.png")]) == 0
    assert len(json.loads(out.read_text())["heads"]) == 12 and (tmp_path / "heads.png").stat().st_size > 0
    capsys.readouterr()
    assert main(["heads", str(translator_ckpt), "--src", str(src), "--ref", str(ref)]) == 2
    assert "heads masks each head of an attnkit Transformer on torch" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv,message",
    [
        (
            ["translate", "--attention-map", "rollout", "a cat"],
            "an attnkit RNN translator (torch): it has one attention layer",
        ),
        (["translate", "--attention-map", "sharpest", "a cat"], "invalid choice: 'sharpest'"),
        (["translate", "--attention-map", "grad", "--backend", "onnx", "a cat"], "reads the torch model"),
        (["faithfulness", "--data", "x.jsonl", "--methods", "sharpest"], "unknown method 'sharpest'"),
    ],
)
def test_attention_map_options_that_do_not_apply_exit_2_with_one_line(translator_ckpt, capsys, argv, message):
    if argv[0] == "translate":
        argv = [*argv[:1], "--model", str(translator_ckpt), *argv[1:]]
    try:
        code = main(argv)
    except SystemExit as stop:  # argparse's own refusals
        code = stop.code
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1] and len(err) <= 2


def test_a_row_gate_masks_each_batch_row_as_its_own_gate_would():
    torch.manual_seed(0)
    attention = MultiHeadAttention(16, 4).eval()
    query, memory = torch.randn(3, 2, 16), torch.randn(3, 5, 16)
    gates = torch.tensor([[1.0, 0.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 1.0]])
    attention.head_gate = gates
    together, _ = attention(query, memory, memory, need_weights=False)
    for row, gate in enumerate(gates):
        attention.head_gate = gate
        alone, _ = attention(query[row : row + 1], memory[row : row + 1], memory[row : row + 1])
        assert torch.allclose(together[row : row + 1], alone, atol=1e-6)


@pytest.mark.filterwarnings("ignore:.*length limit")
@pytest.mark.parametrize("beam", [1, 3])
def test_masks_decoded_together_equal_each_mask_decoded_alone(transformer, beam, monkeypatch):
    """Several masks share one batch (and the encoder layers below their first masked head); each
    mask's translations and loss are those of the model masked alone."""
    import attnkit.evaluation.head_batches as batches
    from attnkit.evaluation.heads import corpus_loss

    monkeypatch.setattr(batches, "ROWS", 8)  # several groups of masks, and some masks alone
    sources = ["the cat sat .", "a dog .", "", "the dog sat on the cat .", "a cat ."]
    refs = ["le chat .", "un chien .", "rien .", "le chien .", "un chat ."]
    masks = [[], [("encoder", 1, 0)], [("encoder", 0, 1), ("cross", 1, 1)], [("decoder", 0, 0)],
             [("cross", 0, 0), ("cross", 0, 1)], all_heads(transformer.model)]  # fmt: skip
    src_ids, tgt_ids = transformer.pair_ids(sources, refs)
    together, losses = batches.masked_scores(transformer, src_ids, tgt_ids, masks, beam, batch=2)
    for mask, hypotheses, loss in zip(masks, together, losses):
        with masked_heads(transformer.model, mask):
            alone = [r.translation for r in transformer.translate(sources, beam=beam, batch_size=2)]
            assert loss == pytest.approx(corpus_loss(transformer, src_ids, tgt_ids), abs=1e-5)
        assert hypotheses == alone
    assert together[0][2] == "" and len({tuple(h) for h in together}) > 1  # the masks change outputs
