"""Why the gradient lesson's lines fall as they do (issue #59, item 4): the slopes are the initialisation's.

The page once said "the LSTM's and GRU's gates let part of the state pass through unchanged" beside a
figure whose LSTM, at PyTorch's default forget-gate bias (gate ≈ 0.5), lost 28 orders of magnitude at
T = 128; and step 1 gave the tanh RNN's "more than 10,000×" with no cause, though most of it is PyTorch's
default W_hh (spectral radius ≈ 0.6).  Here every number the new sentences quote is checked against an
independent reference: plain autograd, torch's own LSTM modules, numpy's eigenvalues, closed forms."""

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from explorer.analysis import bptt
from explorer.analysis.gradients import build_sequence_model, input_gradient_norms, random_sequence
from explorer.kit.settings import check
from explorer.kit.steps import load_steps
from explorer.lessons.gradients import measures as gv
from explorer.lessons.gradients.view import (
    GRADIENT_CLAIMS,
    DependencySettings,
    GradientSettings,
    RecallSettings,
    gradient_view,
    recall_view,
)
from explorer.model.building import seeded
from explorer.model.rnn import RecurrentNet
from explorer.training.pretrained import load_model
from harness.claims import answer
from tests.unit.test_lib_bptt import reference_log10


def reading():
    """The lesson's sentences on its slopes (imported here, so that each test below fails on its own on
    the code before them, where the module did not exist)."""
    from explorer.lessons.gradients import reading as gradient_reading

    return gradient_reading


def autograd_log10(kind, width, T, forget_bias, seed=0, init="default", gain=1.0):
    """log10 ‖∂L/∂x_t‖ by plain autograd on the model with the forget-gate bias added."""
    model = build_sequence_model(kind, width, init=init, gain=gain, seed=seed, forget_bias=forget_bias)
    return np.log10(input_gradient_norms(model, random_sequence(T, width, seed=1000 + seed)))


@torch.no_grad()
def torch_forget_gates(cell: nn.LSTMCell, x: torch.Tensor) -> torch.Tensor:
    """The reference: the states from torch's own LSTMCell; f_t = σ(W_if x_t + b_if + W_hf h_{t−1} + b_hf)
    from its parameters (torch's gate order i, f, g, o).  x: (B, T, input) → (B, T, hidden)."""
    H = cell.hidden_size
    h = x.new_zeros(x.shape[0], H)
    c = x.new_zeros(x.shape[0], H)
    gates = []
    for t in range(x.shape[1]):
        f = torch.sigmoid(x[:, t] @ cell.weight_ih[H:2 * H].T + cell.bias_ih[H:2 * H]
                          + h @ cell.weight_hh[H:2 * H].T + cell.bias_hh[H:2 * H])
        gates.append(f)
        h, c = cell(x[:, t], (h, c))
    return torch.stack(gates, 1)


# --- the control: a forget-gate bias added to PyTorch's, the LSTM only -------------------------------


def test_the_forget_gate_bias_is_added_to_the_lstms_forget_gate_only():
    width = 8
    plain = build_sequence_model("lstm", width, seed=4).net.cell
    shifted = build_sequence_model("lstm", width, seed=4, forget_bias=1.0).net.cell
    change = (shifted.bias_ih - plain.bias_ih).detach()
    np.testing.assert_allclose(change[width:2 * width], 1.0, atol=1e-6)  # the forget gate (i, f, g, o)
    assert torch.count_nonzero(change[:width]) == 0 and torch.count_nonzero(change[2 * width:]) == 0
    assert torch.equal(shifted.bias_hh, plain.bias_hh) and torch.equal(shifted.weight_hh, plain.weight_hh)
    # 0 is PyTorch's own initialisation, the weights a plain RecurrentNet draws under the same seed
    with seeded(4):
        torchs = RecurrentNet("lstm", width, width).cell
    for name, value in torchs.state_dict().items():
        assert torch.equal(build_sequence_model("lstm", width, seed=4, forget_bias=0.0).net.cell.state_dict()[name],
                           value.double())
    for kind in ("rnn", "gru"):  # no forget gate: untouched
        a, b = build_sequence_model(kind, width, seed=4), build_sequence_model(kind, width, seed=4, forget_bias=3.0)
        assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True))


@pytest.mark.parametrize("forget_bias", [0.0, 1.0, 3.0])
def test_the_curves_with_a_forget_gate_bias_are_plain_autograd(forget_bias):
    got = bptt.recurrent_log_gradient_norms("lstm", 6, 20, seeds=(0, 2), forget_bias=forget_bias)
    for row, seed in zip(got, (0, 2), strict=True):
        np.testing.assert_allclose(row, autograd_log10("lstm", 6, 20, forget_bias, seed=seed), atol=1e-10)


def test_the_control_is_bounded_defaults_to_plus_one_and_keeps_pytorchs_zero():
    assert GradientSettings().forget_bias == 1.0
    check(GradientSettings(forget_bias=0.0))  # PyTorch's default stays selectable
    check(GradientSettings(forget_bias=5.0))
    for wrong in (-1.0, 5.5, 0.25):
        with pytest.raises(ValueError, match="LSTM forget-gate bias"):
            check(GradientSettings(forget_bias=wrong))
    # the view is cached per setting, and the tanh RNN's and the GRU's curves do not depend on it
    one, three = (gv.gradient_curves(16, 8, "default", 1.0, None, 2, forget_bias=b) for b in (1.0, 3.0))
    assert gv.gradient_curves(16, 8, "default", 1.0, None, 2, forget_bias=1.0) is one
    assert not np.array_equal(one.log10_norms["lstm"], three.log10_norms["lstm"])
    for kind in ("rnn", "gru", "transformer"):
        np.testing.assert_array_equal(one.log10_norms[kind], three.log10_norms[kind])


# --- the numbers the sentences quote ------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "gate"), [("lstm", "f"), ("gru", "z")])
def test_the_gate_means_are_torchs_own_cells_gates(kind, gate):
    T, width, seeds, bias = 24, 8, (0, 1), 2.0
    got = bptt.recurrent_gate_means(kind, width, T, seeds=seeds, forget_bias=bias)
    values = []
    for seed in seeds:
        cell = build_sequence_model(kind, width, seed=seed, forget_bias=bias).net.cell
        x = random_sequence(T, width, seed=1000 + seed)[None]
        if kind == "lstm":
            values.append(torch_forget_gates(cell, x))
        else:  # the GRU's update gate z = σ(W_iz x + b_iz + W_hz h + b_hz), states from torch's GRUCell
            h, zs = x.new_zeros(1, width), []
            with torch.no_grad():
                for t in range(T):
                    zs.append(torch.sigmoid(x[:, t] @ cell.weight_ih[width:2 * width].T + cell.bias_ih[width:2 * width]
                                            + h @ cell.weight_hh[width:2 * width].T + cell.bias_hh[width:2 * width]))
                    h = cell(x[:, t], h)
            values.append(torch.stack(zs, 1))
    assert got == pytest.approx(float(torch.stack(values).mean()), abs=1e-12)


def test_the_spectral_radius_is_numpys_and_the_closed_forms():
    width, seeds = 64, (0, 1, 2)
    expected = np.mean([np.abs(np.linalg.eigvals(build_sequence_model("rnn", width, seed=s).net.cell.weight_hh
                                                 .detach().numpy())).max() for s in seeds])
    assert gv.recurrent_radius(width, seeds=seeds) == pytest.approx(expected, rel=1e-9)
    # PyTorch's uniform(±1/√H) has variance 1/(3H): by the circular law its radius is near 1/√3 at any width
    assert gv.recurrent_radius(width, seeds=seeds) == pytest.approx(1 / math.sqrt(3), abs=0.05)
    # an orthogonal matrix times a gain has every eigenvalue of modulus exactly the gain
    assert gv.recurrent_radius(16, "orthogonal", 1.7, seeds) == pytest.approx(1.7, abs=1e-6)


def test_a_forget_gate_nearer_1_loses_less():
    """What the reading says of the gates, at the page's default length and width: the larger the bias,
    the nearer the forget gate to 1, the fewer orders the LSTM loses (the page once showed 0 only, where the
    gate is 0.5 and the LSTM lost 28 orders at T = 128)."""
    T, width = 64, 32
    gates, lost = [], []
    for bias in (0.0, 1.0, 3.0):
        curves = gv.gradient_curves(T, width, "default", 1.0, None, 3, forget_bias=bias)
        gates.append(curves.gates["lstm"])
        lost.append(-gv.orders_between(curves.log10_norms["lstm"], 1, T - 1))
    assert gates[0] == pytest.approx(0.5, abs=0.01) and gates[0] < gates[1] < gates[2] < 1
    assert lost[0] > lost[1] > lost[2] > 0
    at_128 = [float(np.mean([autograd_log10("lstm", 32, 128, b, seed=s)[127] - autograd_log10("lstm", 32, 128, b,
                                                                                                seed=s)[1]
                             for s in range(3)])) for b in (0.0, 1.0, 3.0)]
    assert at_128[0] > 25 and 10 < at_128[1] < 14 and at_128[2] < 2  # the orders the issue recomputed


def test_the_caption_and_the_reading_name_the_initialisation_with_its_numbers():
    settings = GradientSettings(T=16)
    view = gradient_view(settings)
    radius = np.mean([np.abs(np.linalg.eigvals(build_sequence_model("rnn", 32, seed=s).net.cell.weight_hh.detach()
                                               .numpy())).max() for s in range(3)])
    cells = [build_sequence_model("lstm", 32, seed=s, forget_bias=1.0).net.cell for s in range(3)]
    gate = float(torch.stack([torch_forget_gates(cell, random_sequence(16, 32, seed=1000 + s)[None])
                              for s, cell in enumerate(cells)]).mean())
    caption = reading().weights_named(settings, view)
    assert f"spectral radius {radius:.2f}, mean over 3 seeds" in caption
    assert f"forget-gate bias +1 added to PyTorch's (its forget gate averages {gate:.2f})" in caption
    text = reading().slopes_explained(settings, view)
    assert "pass through unchanged" not in text
    assert f"Here the LSTM's forget gate averages {gate:.2f}" in text
    orthogonal = np.mean([reference_log10("rnn", 32, 16, init="orthogonal", seed=s)[1]
                          - reference_log10("rnn", 32, 16, init="orthogonal", seed=s)[15] for s in range(3)])
    assert f"would read {orthogonal:+.1f} instead of {view.change['rnn']:+.1f}" in text
    assert "which keeps every vector's size" in text  # not the gradient's: tanh's slope still shrinks it
    zero = dataclasses.replace(settings, forget_bias=0.0)
    assert "averages 0.50" in reading().slopes_explained(zero, gradient_view(zero))


def test_section_3_names_the_loops_weights():
    text = reading().dependency_weights(DependencySettings(kind="lstm", forget_bias=2.0))
    assert "PyTorch's default W_hh" in text and "forget-gate bias +2 added" in text
    assert "How fast the loop fades" not in text  # it grows with the distance at a large orthogonal gain
    radius = np.abs(np.linalg.eigvals(build_sequence_model("rnn", 16, seed=0).net.cell.weight_hh.detach()
                                      .numpy())).max()
    assert f"spectral radius {radius:.2f}" in text
    assert "orthogonal W_hh times 2.5" in reading().dependency_weights(DependencySettings(init="orthogonal", gain=2.5))
    # the LSTM's matrix follows the bias too
    assert not np.array_equal(gv.dependency_views("lstm", 8, 8, forget_bias=0.0).recurrent,
                              gv.dependency_views("lstm", 8, 8, forget_bias=3.0).recurrent)


# --- the step answers ---------------------------------------------------------------------------------


def _step(title: str):
    return next(step for step in load_steps("gradients") if step.title == title)


def test_step_1_says_the_loss_is_mostly_pytorchs_default_w_hh():
    step = _step("Sixteen steps back")
    text = answer("gradients", step)
    radius = np.mean([np.abs(np.linalg.eigvals(build_sequence_model("rnn", 32, seed=s).net.cell.weight_hh.detach()
                                               .numpy())).max() for s in range(3)])
    orthogonal = -np.mean([reference_log10("rnn", 32, 16, init="orthogonal", seed=s)[1]
                           - reference_log10("rnn", 32, 16, init="orthogonal", seed=s)[15] for s in range(3)])
    assert f"most of it is PyTorch's default W_hh (spectral radius {radius:.2f})" in text
    assert f"the tanh RNN loses {orthogonal:.1f}." in text
    assert "(the LSTM's forget-gate bias is +1)" in text
    # the claim says so only where it is true: not with orthogonal weights, not where the loss is not mostly W's
    shown = type("Shown", (), {})()
    shown.settings = GradientSettings(T=16, init="orthogonal", gain=1.0)
    shown.view = gradient_view(shown.settings)
    assert not GRADIENT_CLAIMS["loop_fades"].holds(shown)


def test_step_3_says_only_what_its_figure_shows_of_the_gated_networks():
    text = answer("gradients", _step("Stretch the weights: exploding"))
    assert "need a larger gain" not in text and "The gated networks change far less" in text


# --- what training does to the gates ----------------------------------------------------------------


def test_training_opened_the_shipped_lstms_forget_gates():
    """The reference: the shipped model's weights in torch's own nn.LSTM (the fused implementation) give
    the states; the forget gates follow from its parameters, on every evaluation position up to the '?'."""
    loaded = load_model("recall-lstm")
    cell = loaded.model.rnn.cell
    H = cell.hidden_size
    lstm = nn.LSTM(cell.input_size, H, batch_first=True)
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(lstm, f"{name}_l0").copy_(getattr(cell, name))
        batch = loaded.task.evaluation()
        x = loaded.model.embed(batch.inputs)
        states, _ = lstm(x)
        previous = torch.cat([states.new_zeros(len(x), 1, H), states[:, :-1]], 1)
        f = torch.sigmoid(x @ cell.weight_ih[H:2 * H].T + cell.bias_ih[H:2 * H]
                          + previous @ cell.weight_hh[H:2 * H].T + cell.bias_hh[H:2 * H])[batch.valid]
    gates = gv.trained_forget_gates("recall-lstm")
    assert gates.trained == pytest.approx(float(f.mean()), abs=1e-5)
    assert gates.trained_open == pytest.approx(float((f > 0.9).double().mean()), abs=1e-3)
    assert gates.initial == pytest.approx(0.5, abs=0.02)  # PyTorch's default: σ(≈ 0)
    assert gates.trained > 0.8
    text = reading().training_and_gates(recall_view(RecallSettings()))
    assert f"average {gates.trained:.2f} in the trained model" in text and f"against {gates.initial:.2f}" in text


def test_attentions_line_is_described_as_its_curve_shows():
    """The reading said "Attention's line has no such slope" at every setting; at T = 512, width 8, one seed
    its gradient spans 1.7 orders over t = 0 … 510, and at T = 64 most of its number beside the chart is the
    last input, which alone also enters through the query of the output the loss reads.  Checked against
    plain autograd on the same model and input."""
    def logs(T, width, seeds=(0,)):  # the mean of log10 over seeds, as the page's line
        return np.mean([np.log10(input_gradient_norms(build_sequence_model("transformer", width, seed=s),
                                                      random_sequence(T, width, seed=1000 + s))) for s in seeds], 0)

    wide = logs(512, 8)
    settings = GradientSettings(T=512, width=8, n_seeds=1)
    text = reading().attention_line(gradient_view(settings))
    spread = wide[:-1].max() - wide[:-1].min()
    assert spread > 1 and "no such slope" not in text
    assert f"over t = 0 … 510 it spans {spread:.1f} orders" in text
    flat = logs(64, 32, (0, 1, 2))
    view = gradient_view(GradientSettings(T=64, width=32, n_seeds=3))
    text = reading().attention_line(view)
    above = flat[-1] - flat[:-1].max()
    assert f"stays within {flat[:-1].max() - flat[:-1].min():.1f} orders" in text
    assert f"The last input stands {above:.1f} orders above all the others" in text
    assert ("most of attention's number" in text) == (above > abs(view.change["transformer"]) / 2)


@pytest.mark.parametrize("gain", [0.3, 0.9])
def test_below_gain_1_the_gradient_on_the_state_shrinks_by_at_least_the_gain_per_step(gain):
    """The Try said 'below 1 the tanh RNN's gradient dies faster'; now the bound it is: ‖∂L/∂h_{t−1}‖ ≤ gain ·
    ‖∂L/∂h_t‖, since ∂h_t/∂h_{t−1} = diag(1 − h_t²) W_hh with W_hh orthogonal times the gain.  By autograd,
    through torch's own RNNCell step by step."""
    cell = build_sequence_model("rnn", 16, init="orthogonal", gain=gain, seed=1).net.cell
    x = random_sequence(24, 16, seed=1001)
    h, states = torch.zeros(1, 16, dtype=torch.float64), []
    for t in range(24):
        h = cell(x[t:t + 1], h)
        h.retain_grad()
        states.append(h)
    (h @ torch.ones(16, dtype=torch.float64)).sum().backward()
    norms = np.array([float(state.grad.norm()) for state in states])  # ‖∂L/∂h_t‖, t = 0 … 23
    assert np.all(norms > 0)
    assert np.all(norms[:-1] <= gain * norms[1:] * (1 + 1e-12))
    page = " ".join(Path("explorer/lessons/gradients/gradients.py").read_text().split())
    assert "the gradient on the tanh RNN's state shrinks by at least that factor at every step back" in page
