"""Symmetrization of two directions' alignments and gradient saliency as alignment scores."""

import numpy as np
import pytest
import torch

from attnkit.alignment.links import aer, align, grow_diag, symmetrize, word_matrices
from attnkit.data.batching import make_batch
from attnkit.evaluation.faithfulness import alignment_faithfulness


def test_grow_diag_adds_neighbours_of_the_intersection_that_align_new_words():
    forward = {(0, 0), (1, 1), (2, 1)}
    backward = {(0, 0), (1, 1), (3, 3)}
    # intersection {(0,0),(1,1)}; (2,1) neighbours (1,1) and aligns source word 2: added.
    # (3,3) is no neighbour of an aligned point: only grow-diag-final adds it (both words unaligned).
    assert grow_diag(forward, backward) == {(0, 0), (1, 1), (2, 1)}
    assert grow_diag(forward, backward, final=True) == {(0, 0), (1, 1), (2, 1), (3, 3)}


def test_grow_diag_skips_union_points_whose_words_are_both_aligned():
    forward, backward = {(0, 0), (1, 1), (0, 1)}, {(0, 0), (1, 1)}
    assert grow_diag(forward, backward, final=True) == {(0, 0), (1, 1)}


def test_symmetrize_combines_the_directions_by_name():
    forward = np.array([[0.9, 0.1], [0.8, 0.2]])  # target x source: both target words -> source 0
    backward = np.array([[0.7, 0.3], [0.2, 0.8]])  # source x target: source 0 -> 0, source 1 -> 1
    assert symmetrize(forward, backward, "intersection") == {(0, 0)}
    assert symmetrize(forward, backward, "union") == {(0, 0), (0, 1), (1, 1)}
    assert symmetrize(forward, backward, "mean") == align((forward + backward.T) / 2, "argmax")
    with pytest.raises(ValueError, match="valid: grow-diag-final"):
        symmetrize(forward, backward, "average")


def test_saliency_rows_are_normalized_gradient_x_input(translator_ckpt):
    from attnkit.translator import Translator

    translator = Translator.from_checkpoint(translator_ckpt)
    maps = word_matrices(translator, ["ab cd ef"], ["ab cd ef"], scores="saliency")
    assert maps[0].shape == (3, 3) and np.all(maps[0] >= 0)
    from attnkit.explain.saliency import saliency_maps

    src_p, tgt_p, piece = saliency_maps(translator, ["ab cd ef"], ["ab cd ef"])[0]
    np.testing.assert_allclose(piece.sum(1), 1.0, atol=1e-5)
    # row 0 by hand: |sum_e x * d log p(y_0) / d x| over source pieces, normalized.
    model = translator.model
    src_ids, tgt_ids = translator.pair_ids(["ab cd ef"], ["ab cd ef"])
    batch = make_batch(src_ids, tgt_ids)
    x = model.source_embedding(batch.src).detach().requires_grad_(True)
    logits = model.forward_embedded(x, batch.src_mask, batch.tgt_in).logits
    first = model.output.targets(batch.tgt_out[:, :1])[0, 0]
    torch.log_softmax(logits[0, 0], -1)[first].backward()
    row = (x * x.grad).sum(-1).abs()[0].detach()
    np.testing.assert_allclose(piece[0], (row / row.sum()).numpy(), atol=1e-5)


def test_alignment_faithfulness_scores_both_sources_of_links(translator_ckpt):
    from attnkit.translator import Translator

    translator = Translator.from_checkpoint(translator_ckpt)
    sources, targets = ["ab cd", "ef ab cd"], ["ab cd", "ef ab"]
    sure = [{(0, 0)}, {(0, 0), (1, 1)}]
    possible = [{(0, 0), (1, 1)}, {(0, 0), (1, 1), (2, 1)}]
    kinds = ("attention", "saliency", "grad")
    report = alignment_faithfulness(translator, sources, targets, sure, possible, ["argmax"], 50, kinds)
    for kind in kinds:
        links = [align(m, "argmax") for m in word_matrices(translator, sources, targets, scores=kind)]
        entry = report["scores"][kind]["argmax"]
        assert entry["aer"] == pytest.approx(aer(links, sure, possible).aer, abs=1e-4)
        assert entry["aer_ci95"][0] <= entry["aer"] + 1e-9 <= entry["aer_ci95"][1] + 2e-9
    assert set(report["argmax_agreement"]) == {"saliency", "grad"} and report["n_sentences"] == 2
    assert all(0.0 <= a["mean"] <= 1.0 for a in report["argmax_agreement"].values())
