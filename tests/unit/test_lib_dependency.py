"""explorer.analysis.dependency: ‖∂y_t/∂x_s‖ by batched backward passes against
torch.autograd.functional.jacobian, and the unmasked attention stack."""

import numpy as np
import pytest
import torch

from explorer.analysis.dependency import UnmaskedAttentionStack, dependency_matrix, fast_dependency_matrix
from explorer.analysis.gradients import build_sequence_model, random_sequence


def _jacobian_block_norms(model, x):
    jac = torch.autograd.functional.jacobian(lambda inp: model(inp[None])[0], x, vectorize=False)
    T = x.shape[0]
    return np.array([[jac[t, :, s, :].norm().item() for s in range(T)] for t in range(T)])


def test_dependency_matrix_of_causal_attention():
    model = build_sequence_model("transformer", 8)
    x = random_sequence(8, 8)
    dep = dependency_matrix(model, x)
    assert dep.shape == (8, 8)
    upper = np.triu(np.ones((8, 8), dtype=bool), k=1)
    assert np.all(dep[upper] == 0)
    assert np.all(dep[~upper] > 0)
    np.testing.assert_allclose(dep, _jacobian_block_norms(model, x), rtol=1e-10, atol=1e-12)


def test_dependency_matrix_of_rnn_is_lower_triangular_and_fading():
    model = build_sequence_model("rnn", 8)
    x = random_sequence(8, 8)
    dep = dependency_matrix(model, x)
    upper = np.triu(np.ones((8, 8), dtype=bool), k=1)
    assert np.all(dep[upper] == 0)
    assert np.all(dep[~upper] > 0)
    for t in range(8):
        row = dep[t, : t + 1]
        assert np.all(np.diff(row) > 0), f"row {t} does not fade away from the diagonal: {row}"
    np.testing.assert_allclose(dep, _jacobian_block_norms(model, x), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru", "transformer"])
def test_fast_dependency_matrix_equals_the_jacobian_reference(kind):
    model = build_sequence_model(kind, 4, seed=2)
    x = random_sequence(9, 4, seed=4)
    expected = dependency_matrix(model, x)  # the original: torch.autograd.functional.jacobian
    for causal, rows in ((False, None), (True, None), (True, 2), (False, 4)):
        got = fast_dependency_matrix(model, x, causal=causal, rows_per_chunk=rows)
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-14)
    assert all(p.requires_grad for p in model.parameters()), "the model must be left as it was"


def test_unmasked_stack_is_the_same_layer_without_the_mask():
    causal = build_sequence_model("transformer", 8, seed=1)
    unmasked = UnmaskedAttentionStack(causal)
    x = random_sequence(7, 8)[None]
    with torch.no_grad():
        a, b = causal(x), unmasked(x)
    # The last position sees every input either way; earlier ones see more without the mask.
    torch.testing.assert_close(a[:, -1], b[:, -1])
    assert not torch.allclose(a[:, 0], b[:, 0])
    dep = fast_dependency_matrix(unmasked, x[0])
    np.testing.assert_allclose(dep, dependency_matrix(unmasked, x[0]), rtol=1e-10)
    assert np.all(dep > 0), "without a mask every output depends on every input"

