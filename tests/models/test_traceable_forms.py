"""The forms exports trace live beside the models they mirror and compute the same function:
padded bidirectional RNNs and the matrix-product cell equal torch's RNNs, HAN.forward_padded equals
HAN.forward, the Transformer's tensor-position step equals its step, the cache-free output layer
equals the cached one."""

import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from attnkit.models.han import HAN, HANEnsemble
from attnkit.models.padded_rnn import PaddedBiRNN, StepRNN
from attnkit.models.transformer import TransformerState
from tests.helpers import tiny_transformer


@pytest.mark.parametrize(("kind", "layers"), [("GRU", 1), ("GRU", 2), ("LSTM", 2)])
def test_step_rnn_is_one_step_of_the_torch_rnn(kind, layers):
    """The decoder cell as matrix products (what the int8 step graph runs) equals nn.GRU / nn.LSTM."""
    torch.manual_seed(0)
    rnn = getattr(torch.nn, kind)(6, 5, num_layers=layers, batch_first=True).eval()
    x, h = torch.randn(3, 1, 6), torch.randn(layers, 3, 5)
    state = (h, torch.randn(layers, 3, 5)) if kind == "LSTM" else h
    with torch.no_grad():
        expected, expected_state = rnn(x, state)
        out, new = StepRNN(rnn)(x, state)
    torch.testing.assert_close(out, expected, atol=1e-6, rtol=0)
    for a, b in zip(new if kind == "LSTM" else [new], expected_state if kind == "LSTM" else [expected_state]):
        torch.testing.assert_close(a, b, atol=1e-6, rtol=0)


@pytest.mark.parametrize(("kind", "layers"), [("GRU", 1), ("GRU", 2), ("LSTM", 2)])
def test_padded_birnn_equals_the_packed_rnn_and_zeroes_padding(kind, layers):
    torch.manual_seed(1)
    rnn = getattr(torch.nn, kind)(4, 3, num_layers=layers, batch_first=True, bidirectional=True).eval()
    x, lengths = torch.randn(4, 6, 4), torch.tensor([6, 2, 4, 1])
    with torch.no_grad():
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, final = rnn(packed)
        expected, _ = pad_packed_sequence(out, batch_first=True, total_length=6)
        padded, padded_final = PaddedBiRNN(rnn)(x, lengths)
    torch.testing.assert_close(padded, expected, atol=1e-6, rtol=0)
    torch.testing.assert_close(padded_final, final[0] if kind == "LSTM" else final, atol=1e-6, rtol=0)
    inside = torch.arange(6)[None, :] < lengths[:, None]
    assert (padded[~inside] == 0).all()


def _documents():
    words = torch.tensor([[[4, 5, 6], [7, 8, 0], [0, 0, 0]], [[9, 0, 0], [0, 0, 0], [0, 0, 0]]])
    return words, words != 0


@pytest.mark.parametrize("members", [1, 2])
def test_han_padded_forward_equals_the_packed_forward(members):
    torch.manual_seed(2)
    hans = [
        HAN(12, num_classes=3, embed_size=6, word_hidden=4, sentence_hidden=3).eval() for _ in range(members)
    ]
    words, mask = _documents()
    with torch.no_grad():
        outputs = [han(words, mask) for han in hans]
        padded = [han.forward_padded(words, mask) for han in hans]
        for a, b in zip(outputs, padded):
            for name in ("logits", "word_weights", "sentence_weights"):
                torch.testing.assert_close(getattr(b, name), getattr(a, name), atol=1e-6, rtol=0)
        if members > 1:
            ensemble = HANEnsemble(hans)(words, mask)
            probs, word_weights, _ = HANEnsemble.average(padded)
            torch.testing.assert_close(probs.log(), ensemble.logits, atol=1e-6, rtol=0)
            torch.testing.assert_close(word_weights, ensemble.word_weights, atol=1e-6, rtol=0)


def test_transformer_tensor_position_step_equals_its_step():
    torch.manual_seed(3)
    model = tiny_transformer().eval()
    src = torch.tensor([[5, 6, 7, 3], [8, 9, 3, 1]])
    src_mask = src != 1
    with torch.no_grad():
        state = model.encode(src, src_mask)
        for token in (2, 10, 11):  # three steps: the caches grow, the positions move
            prev = torch.full((2, 1), token)
            offset = state.offset
            log_probs, new, attention = model.step(prev, state)
            cache = state.cache or [
                type(kv)(kv.key[:, :, :0], kv.value[:, :, :0]) for kv in state.cross
            ]  # an empty cache, as the exported graph is first fed
            traced = TransformerState(None, state.src_mask, state.cross, cache, torch.tensor([offset]))
            log_probs2, layers, _ = model.step_layers(prev, traced)
            torch.testing.assert_close(log_probs2, log_probs, atol=1e-5, rtol=0)
            expected = layers[:, model.attention_layer].mean(1, keepdim=True)
            torch.testing.assert_close(expected, attention, atol=1e-6, rtol=0)
            state = new
        hidden = torch.randn(2, model.d_model)
        torch.testing.assert_close(model.output.logits(hidden), model.output(hidden), atol=1e-6, rtol=0)
