"""The bidirectional RNN of the gradient lesson (issue #30): our loop, written out in both directions,
against torch's own nn.RNN(bidirectional=True) carrying the same weights."""

import numpy as np
import pytest
import torch
from torch import nn

import explorer
from explorer.analysis.dependency import dependency_matrix, dependency_path_lengths, fast_dependency_matrix
from explorer.analysis.gradients import build_sequence_model, random_sequence
from explorer.lessons.gradients import measures as gv
from explorer.model.building import seeded


def torch_birnn_like(model: nn.Module, width: int) -> nn.RNN:
    """torch's bidirectional tanh RNN with our model's weights (float64, batch first)."""
    rnn = nn.RNN(width, width, batch_first=True, bidirectional=True).double()
    ours = {"": model.net.forward_net.cell, "_reverse": model.net.backward_net.cell}
    with torch.no_grad():
        for suffix, cell in ours.items():
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(rnn, f"{name}_l0{suffix}").copy_(getattr(cell, name))
    return rnn.eval()


@pytest.mark.parametrize(("T", "width", "init", "gain"), [(7, 3, "default", 1.0), (12, 5, "orthogonal", 1.3)])
def test_dependency_equals_the_jacobian_of_torchs_bidirectional_rnn(T, width, init, gain):
    model = build_sequence_model("birnn", width=width, seed=3, init=init, gain=gain)
    reference = torch_birnn_like(model, width)
    x = random_sequence(T, width, seed=11)
    with torch.no_grad():
        np.testing.assert_allclose(model(x[None]).numpy(), reference(x[None])[0].numpy(), atol=1e-13, rtol=0)
    jac = torch.autograd.functional.jacobian(lambda inputs: reference(inputs[None])[0][0], x)  # (T, 2w, T, w)
    expected = jac.pow(2).sum(dim=(1, 3)).sqrt().numpy()
    assert np.abs(dependency_matrix(model, x) - expected).max() <= 1e-12
    fast = fast_dependency_matrix(model.requires_grad_(False), x, rows_per_chunk=3)
    assert np.abs(fast - expected).max() <= 1e-12
    # Both directions: every output depends on every input, earlier and later (the one-way loop
    # reads nothing later).
    assert (expected > 0).all()
    one_way = fast_dependency_matrix(build_sequence_model("rnn", width=width, seed=3).requires_grad_(False), x)
    assert (np.triu(one_way, 1) == 0).all()


def test_seeded_weights_are_torchs_bidirectional_initialisation():
    model = build_sequence_model("birnn", width=6, seed=5)
    with seeded(5):
        reference = nn.RNN(6, 6, bidirectional=True)
    for suffix, cell in {"": model.net.forward_net.cell, "_reverse": model.net.backward_net.cell}.items():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            torch.testing.assert_close(getattr(cell, name), getattr(reference, f"{name}_l0{suffix}").double(),
                                       rtol=0, atol=0)
    assert not torch.equal(model.net.forward_net.cell.weight_hh, build_sequence_model("birnn", 6, seed=6)
                           .net.forward_net.cell.weight_hh)
    assert model(random_sequence(4, 6)[None]).shape == (1, 4, 12)


def test_path_lengths_in_closed_form():
    rnn, birnn = dependency_path_lengths(4, "rnn"), dependency_path_lengths(4, "birnn")
    np.testing.assert_array_equal(birnn, [[1, 2, 3, 4], [2, 1, 2, 3], [3, 2, 1, 2], [4, 3, 2, 1]])
    np.testing.assert_array_equal(np.tril(rnn), np.tril(birnn))
    assert np.isinf(rnn[np.triu_indices(4, 1)]).all()
    assert (dependency_path_lengths(4, "unmasked", n_layers=2) == 2).all()
    assert np.isinf(dependency_path_lengths(4, "transformer")[0, 1])
    np.testing.assert_array_equal(dependency_path_lengths(5, "birnn", 3)[-1], gv.path_lengths(5, "birnn", 3))
    np.testing.assert_array_equal(dependency_path_lengths(5, "gru")[-1], gv.path_lengths(5, "gru"))
    with pytest.raises(ValueError):
        dependency_path_lengths(4, "cnn")


def test_the_dependency_view_reads_both_directions():
    views = gv.dependency_views("birnn", 6, 4)
    x = random_sequence(6, 4, seed=gv.INPUT_SEED_OFFSET)
    expected = dependency_matrix(build_sequence_model("birnn", 4, seed=0), x)
    np.testing.assert_allclose(views.recurrent, expected, atol=1e-12, rtol=0)
    assert (views.recurrent[np.triu_indices(6, 1)] > 0).all()  # the one-way loop has zeros there


def test_public_name():
    assert explorer.dependency_path_lengths is dependency_path_lengths
