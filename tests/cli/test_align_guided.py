"""Guided alignment (``attnkit.align_training``): the teacher's links become piece-level attention
targets, and fine-tuning against them moves the attention toward them."""

import numpy as np
import torch

from attnkit.align_training import guided_finetune, guides
from attnkit.api import load_translator
from attnkit.checkpoint import load_checkpoint

SRC, TGT = ["ab cd", "cd ab ab"], ["ab cd", "cd ab ab"]


def test_guides_are_distributions_over_the_linked_source_pieces(translator_ckpt):
    translator = load_translator(str(translator_ckpt), backend="torch", rerank=False)
    data = guides(translator, SRC, TGT, [{(0, 0), (1, 1)}, {(2, 0)}])
    for (s_ids, t_ids, guide), n_rows in zip(data, (2, 1)):
        assert guide.shape == (len(t_ids) + 1, len(s_ids) + len(translator.source_suffix))
        sums = guide.sum(1)
        assert np.allclose(sums[sums > 0], 1.0) and (sums > 0).sum() >= n_rows  # a row per linked piece
        assert guide[-1].sum() == 0 and guide[:, -1].sum() == 0  # </s> is never a teacher's word
    cols = np.nonzero(data[1][2][0])[0]  # target word 0 of pair 2 is linked to source word 2, the last
    assert cols.max() == len(data[1][0]) - 1 and list(cols) == list(range(cols.min(), cols.max() + 1))


def test_guided_finetuning_moves_attention_toward_the_teacher(translator_ckpt, tmp_path):
    translator = load_translator(str(translator_ckpt), backend="torch", rerank=False)
    teacher = [{(1, 0), (0, 1)}, {(0, 0), (1, 1), (2, 2)}]  # the first pair crossed on purpose
    data = guides(translator, SRC, TGT, teacher)

    def agreement() -> float:
        maps = translator.forced_attention(SRC, TGT)
        return float(
            sum((m * g[: m.shape[0], : m.shape[1]]).sum() for (_, _, m), (_, _, g) in zip(maps, data))
        )

    before = agreement()
    out = guided_finetune(translator, translator_ckpt, data, 30, tmp_path / "g.pt", weight=5.0, lr=1e-2)
    assert agreement() > before + 0.1
    saved = load_checkpoint(out)
    assert all(v.dtype == torch.float32 for v in saved.model.values() if v.is_floating_point())
    assert saved.tokenizer == load_checkpoint(translator_ckpt).tokenizer


def test_align_adapt_guided_end_to_end_and_its_refusals(translator_ckpt, tmp_path, capsys):
    from attnkit.cli.main import main

    (tmp_path / "s").write_text("\n".join(SRC) + "\n")
    (tmp_path / "t").write_text("\n".join(TGT) + "\n")
    base = [
        "align",
        "--model",
        str(translator_ckpt),
        "--src",
        str(tmp_path / "s"),
        "--tgt",
        str(tmp_path / "t"),
    ]
    pair = [*base, "--reverse-model", str(translator_ckpt)]
    assert main([*pair, "--adapt", "2", "--guided", "3", "--save", str(tmp_path / "saved")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and all("-" in line for line in lines if line)
    reuse = [
        "align",
        "--model",
        str(tmp_path / "saved"),
        "--src",
        str(tmp_path / "s"),
        "--tgt",
        str(tmp_path / "t"),
    ]
    assert main(reuse) == 0
    assert capsys.readouterr().out.splitlines() == lines  # the guided pair was saved, not the adapted one
    for argv, message in [
        ([*pair, "--guided", "3"], "--guided trains an adapted pair"),
        ([*base, "--reverse-model", "none", "--adapt", "2", "--guided", "3"], "it needs a reverse model"),
        ([*pair, "--adapt", "2", "--guided", "-1"], "must be >= 0"),
    ]:
        assert main(argv) == 2
        assert message in capsys.readouterr().err
