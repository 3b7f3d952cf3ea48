"""explorer.model.rnn against torch.nn.RNN / LSTM / GRU with the same weights."""

import pytest
import torch

from explorer.model.rnn import RecurrentNet

TORCH_CLASSES = {"rnn": torch.nn.RNN, "lstm": torch.nn.LSTM, "gru": torch.nn.GRU}
B, T, D_IN, D_H = 2, 7, 3, 5


def _pair(kind, seed=0):
    torch.manual_seed(seed)
    ours = RecurrentNet(kind, D_IN, D_H).double()
    theirs = TORCH_CLASSES[kind](D_IN, D_H, batch_first=True).double()
    with torch.no_grad():
        theirs.weight_ih_l0.copy_(ours.cell.weight_ih)
        theirs.weight_hh_l0.copy_(ours.cell.weight_hh)
        theirs.bias_ih_l0.copy_(ours.cell.bias_ih)
        theirs.bias_hh_l0.copy_(ours.cell.bias_hh)
    return ours, theirs


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
def test_hidden_states_match_torch(kind):
    ours, theirs = _pair(kind)
    x = torch.randn(B, T, D_IN, dtype=torch.float64)
    trace = ours(x)
    expected, final = theirs(x)
    assert trace.hidden.shape == (B, T, D_H)
    torch.testing.assert_close(trace.hidden, expected)
    if kind == "lstm":
        _, c_n = final
        assert trace.cell.shape == (B, T, D_H)
        torch.testing.assert_close(trace.cell[:, -1], c_n[0])
    else:
        assert trace.cell is None
        torch.testing.assert_close(trace.hidden[:, -1], final[0])


def test_unknown_kind_is_rejected():
    with pytest.raises(ValueError):
        RecurrentNet("transformer", 2, 2)


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
@pytest.mark.parametrize("window", [1, 3])
def test_bptt_window_truncates_gradient(kind, window):
    ours, _ = _pair(kind, seed=1)
    x = torch.randn(B, T, D_IN, dtype=torch.float64, requires_grad=True)
    full = ours(x)
    truncated = ours(x, bptt_window=window)
    torch.testing.assert_close(truncated.hidden, full.hidden, rtol=0, atol=0)

    (grad_full,) = torch.autograd.grad(full.hidden[:, -1].sum(), x)
    (grad_cut,) = torch.autograd.grad(truncated.hidden[:, -1].sum(), x)
    cut = T - window
    assert torch.all(grad_cut[:, :cut] == 0)
    assert torch.all(grad_full[:, :cut].abs().sum(-1) > 0)
    # Inside the window nothing changes: the detached path does not pass through these inputs.
    torch.testing.assert_close(grad_cut[:, cut:], grad_full[:, cut:])
