"""The step-by-step BiGRU computes what packed nn.GRU computes, forward and backward; bad lengths refused."""

import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from attnkit.models.bigru import BiGRU
from attnkit.models.quantize import quantize_int8

LENGTHS = torch.tensor([3, 7, 1, 7, 2, 5])  # ties, a length-1 row, rows out of order


def _packed_reference(gru: BiGRU, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    return pad_packed_sequence(gru.rnn(packed)[0], batch_first=True, total_length=x.shape[1])[0]


def _inputs(seed: int = 0) -> tuple[BiGRU, torch.Tensor, torch.Tensor]:
    torch.manual_seed(seed)
    gru = BiGRU(5, 4)
    mask = torch.arange(8)[None, :] < LENGTHS[:, None]  # (S, L) with one all-padding column
    return gru, torch.randn(6, 8, 5) * mask[..., None], mask


def test_outputs_and_gradients_equal_packed_nn_gru():
    gru, x, _ = _inputs()
    x_ref, x_new = x.clone().requires_grad_(), x.clone().requires_grad_()
    expected, got = _packed_reference(gru, x_ref, LENGTHS), gru(x_new, LENGTHS)
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=1e-5)
    target = torch.randn_like(expected)
    grads_ref = torch.autograd.grad((expected * target).sum(), [x_ref, *gru.parameters()])
    grads_new = torch.autograd.grad((got * target).sum(), [x_new, *gru.parameters()])
    for ref, new in zip(grads_ref, grads_new):
        torch.testing.assert_close(new, ref, atol=1e-5, rtol=1e-4)


def test_tokens_path_equals_padded_path_and_padding_is_zero():
    gru, x, mask = _inputs(1)
    padded = gru(x, LENGTHS)  # (S, L, 2H)
    assert (padded[~mask] == 0).all()
    torch.testing.assert_close(gru.forward_tokens(x[mask], LENGTHS), padded[mask])
    # the backward direction reads each row from its own end: a length-1 row's two halves see one token
    row = padded[2, 0]
    alone = gru(x[2:3, :1], torch.tensor([1]))[0, 0]
    torch.testing.assert_close(row, alone)


@pytest.mark.parametrize(
    ("lengths", "tokens"),
    [(torch.tensor([2, 0]), 2), (torch.tensor([2, 2]), 3), (torch.tensor([], dtype=torch.long), 0)],
)
def test_bad_lengths_name_the_shapes(lengths: torch.Tensor, tokens: int):
    with pytest.raises(ValueError, match=r"lengths \(S,\) must be >= 1 and sum to the T of tokens \(T, E\)"):
        BiGRU(5, 4).forward_tokens(torch.randn(tokens, 5), lengths)


def test_int8_quantized_gru_runs_the_packed_module_close_to_float():
    gru, x, mask = _inputs(2)
    quantized = quantize_int8(torch.nn.Sequential(gru))[0]
    assert not isinstance(getattr(quantized.rnn, "weight_ih_l0", None), torch.Tensor)
    got, expected = quantized(x, LENGTHS), gru(x, LENGTHS)
    assert (got[~mask] == 0).all()
    torch.testing.assert_close(got, expected, atol=0.05, rtol=0.0)


def test_small_inference_runs_the_packed_module_with_the_same_result():
    gru, x, _ = _inputs(3)
    stepped = gru(x, LENGTHS)  # gradients on: the step loop
    with torch.no_grad():  # 6 rows < SMALL_INFERENCE: nn.GRU on a PackedSequence
        torch.testing.assert_close(gru(x, LENGTHS), stepped.detach(), atol=1e-6, rtol=1e-5)
