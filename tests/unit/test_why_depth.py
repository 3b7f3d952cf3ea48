"""The depth lesson's explanations of Add & Norm (issue #59): what LayerNorm and BatchNorm depend on,
the notes' residual block, and the short cut's direct path, each checked against torch's own modules or
a closed form, and the page's sentences that state them."""

import numpy as np
import pytest
import torch

from explorer.analysis.addnorm import norm_batch_dependence, notes_residual_block
from explorer.analysis.depth import _stack_gradient_norms, build_layer_stack
from explorer.analysis.gradients import random_sequence
from explorer.lessons.depth.view import addnorm_boxes
from harness.apptest import run_page


@pytest.mark.parametrize("width, T", [(16, 4), (32, 16), (64, 32)])
def test_layernorm_ignores_the_batch_and_batchnorm_does_not(width, T):
    changes = norm_batch_dependence(width, T)
    assert max(changes["LayerNorm"].values()) < 1e-6
    assert min(changes["BatchNorm"].values()) > 0.1


def test_batchnorm_change_matches_the_formula_by_hand():
    """BatchNorm in training mode: (x − mean over every token of the batch) / sqrt(biased var + eps), per
    feature.  Recompute the "other sentences" change from that formula on the same draws."""
    width, T, batch = 8, 5, 4
    generator = torch.Generator().manual_seed(0)
    offset = 2 * torch.randn(width, generator=generator)
    scale = 0.5 + torch.rand(width, generator=generator)
    x = (torch.randn(batch, T, width, generator=generator) * scale + offset).double().numpy()
    new = (torch.randn(batch - 1, T, width, generator=generator) * scale + offset).double().numpy()
    others = np.concatenate([x[:1], new])

    def by_hand(b):
        flat = b.reshape(-1, width)
        return ((b - flat.mean(0)) / np.sqrt(flat.var(0) + 1e-5))[0]

    expected = np.abs(by_hand(others) - by_hand(x)).max()
    measured = norm_batch_dependence(width, T, batch=batch)["BatchNorm"]["other sentences"]
    assert measured == pytest.approx(expected, rel=1e-4)


def test_the_notes_block_fails_at_unequal_widths_and_its_relu_cuts_the_short_cut():
    wider = notes_residual_block(32, 128)
    assert not wider["runs"] and "must match" in wider["error"]
    same = notes_residual_block(32, 32, n=256, seed=0)
    # With every weight zero the block is relu(x): it passes on exactly the non-negative inputs.
    x = torch.randn(256, 32, generator=torch.Generator().manual_seed(0))
    assert same["runs"] and same["passed"] == pytest.approx(float((x >= 0).float().mean()))
    assert same["add_passed"] == 1.0


def test_boxes_read_their_findings_from_the_measurement():
    norm, residual = addnorm_boxes(32, 16)
    assert "BatchNorm's output for it moved by up to" in norm.finding
    assert "LayerNorm's output did not move" in norm.finding
    assert [row[1] for row in norm.rows] == ["0", "0", "0"]
    assert "runs only when the hidden width equals the input's" in residual.finding
    assert residual.rows[1][1].startswith("fails:")


def test_the_direct_path_carries_the_gradient_unchanged_only_without_a_norm_on_it():
    """"The product holds a term that passes through no sublayer … in post-norm the LayerNorm after each
    add multiplies that direct path": with every sublayer's weights zero (F = 0), the residual stack without
    LayerNorm hands the top's gradient to layer 0 exactly; post-norm's does not."""
    x = random_sequence(8, 16, seed=3)
    norms = {}
    for norm in ("none", "post"):
        stack = build_layer_stack(6, 16, residual=True, norm=norm, seed=0)
        with torch.no_grad():
            for name, parameter in stack.named_parameters():
                if "norm" not in name:
                    parameter.zero_()
        norms[norm] = _stack_gradient_norms(stack, x)
    assert np.ptp(norms["none"]) < 1e-12 * norms["none"].max()
    assert np.ptp(norms["post"]) > 1e-3 * norms["post"].max()


def test_the_page_defines_add_and_norm_and_answers_the_notes():
    at = run_page("explorer/lessons/depth/depth.py")
    text = " ".join(m.value for m in at.markdown)
    assert "What Add & Norm computes" in text
    assert "shifted to mean 0 and divided by their standard deviation" in text
    assert "unchanged, however small" not in text  # the old claim: the direct path is one term of the product
    assert "a term that passes through no sublayer" in text
    assert "higher *training* error" in text and "§4.1" in text
    titles = [e.label for e in at.expander]
    assert any("Batch or layer normalisation?" in t for t in titles)
    assert any("The notes' residual block" in t for t in titles)
    assert "LayerNorm's output did not move" in text
