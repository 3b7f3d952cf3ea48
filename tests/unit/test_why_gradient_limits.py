"""The gradients lesson's answer to the notes' "gradients within a layer … can't vanish or explode"
(issue #59): the scores' gradient against the softmax's closed-form Jacobian, the values' against p ⊗ r,
the stack against the depth lesson's own measure, and the page's box."""

import math

import numpy as np
import pytest
import torch

from explorer.analysis.attention_limits import SCORE_SCALES, score_gradient, stacked_orders_lost
from explorer.analysis.depth import layer_gradient_norms
from explorer.analysis.gradients import default_readout, random_sequence
from explorer.lessons.gradients.limits import attention_limits_box
from harness.apptest import run_page


@pytest.mark.parametrize("T, width, scale", [(16, 32, 1), (64, 32, 16), (8, 8, 256), (512, 64, 64)])
def test_score_and_value_gradients_match_the_closed_form(T, width, scale):
    """∂L/∂s = (diag(p) − ppᵀ)·(V r) and ∂L/∂V = p rᵀ, with the same draws as the function."""
    generator = torch.Generator().manual_seed(0)
    bound = 1 / math.sqrt(width)
    w_q, w_k, w_v = ((torch.rand(width, width, generator=generator, dtype=torch.float64) * 2 - 1) * bound
                     for _ in range(3))
    x = random_sequence(T, width, seed=0)
    scores = scale * ((x @ w_k) @ (x[-1] @ w_q)) / math.sqrt(width)
    p = torch.softmax(scores, dim=0).numpy()
    r = default_readout(width).numpy()
    jacobian = np.diag(p) - np.outer(p, p)
    expected_scores = np.linalg.norm(jacobian @ ((x @ w_v).numpy() @ r))
    measured = score_gradient(T, width, scale)
    assert measured["scores"] == pytest.approx(expected_scores, rel=1e-9, abs=1e-300)
    assert measured["values"] == pytest.approx(np.linalg.norm(p) * np.linalg.norm(r), rel=1e-9)
    assert measured["top"] == pytest.approx(p.max())


def test_a_saturated_softmax_starves_the_scores_but_not_the_values():
    runs = [score_gradient(16, 32, scale) for scale in SCORE_SCALES]
    assert runs[-1]["top"] > 0.999
    assert runs[-1]["scores"] < 1e-6 * max(r["scores"] for r in runs)
    assert runs[-1]["values"] > 0.99


def test_the_stack_loses_what_the_depth_lesson_measures():
    norms = layer_gradient_norms(12, 32, residual=False, norm="none", seed=0, T=16)
    assert stacked_orders_lost(12, 32, 16) == pytest.approx(math.log10(norms[-1] / norms[0]))
    assert stacked_orders_lost(12, 32, 16) > 5


def test_the_box_answers_the_notes_from_its_numbers():
    box = attention_limits_box(64, 32)
    assert "can't vanish or explode" in box.notes_say
    assert "falls from" in box.finding and "once the softmax saturates" in box.finding
    assert "12 layers without residuals lose" in box.finding


def test_the_page_shows_the_box_beside_the_path_lengths():
    at = run_page("explorer/lessons/gradients/gradients.py")
    assert any("Can attention's gradient vanish?" in e.label for e in at.expander)
    text = " ".join(m.value for m in at.markdown)
    assert "once the softmax saturates" in text


def test_small_numbers_read_as_powers_of_ten():
    from explorer.kit.claims import scientific

    assert [scientific(x) for x in (0.26, 1.1e-05, 3.4e-14, 0.0)] == ["0.26", "1.1×10⁻⁵", "3.4×10⁻¹⁴", "0"]
