"""The gradient lesson's sentences on what sets its slopes, built from the views: the initialisation named
where a figure depends on it (the tanh RNN's W_hh and its spectral radius, the LSTM's forget-gate bias and
its gate's mean value), and what training did to the shipped LSTM's gates.  No Streamlit here.

Cited beside the sentences (and on screen): the forget gate, Gers, Schmidhuber & Cummins 2000 (Neural
Computation 12(10), "Learning to forget"); adding 1 to its bias, Jozefowicz, Zaremba & Sutskever 2015 (ICML,
"An empirical exploration of recurrent network architectures", abstract); PyTorch's default,
uniform(±1/√H) for every weight and bias (torch.nn.RNN / LSTM / GRU documentation).
"""

from __future__ import annotations

from explorer.lessons.gradients.measures import recurrent_radius
from explorer.lessons.gradients.view import (
    DEPENDENCY_WIDTH,
    ORTHOGONAL_REFERENCE,
    DependencySettings,
    GradientSettings,
    GradientView,
    RecallView,
    gates_compared,
    orthogonal_reference,
)

__all__ = ["attention_line", "dependency_weights", "slopes_explained", "training_and_gates", "weights_named"]


def attention_line(view: GradientView) -> str:
    """The reading's sentence on attention's line, from its curve: how far it spreads over t = 0 … T − 2,
    and how far the last input stands above the rest (it alone also enters through the query of y_{T−1},
    the output the loss reads), which is most of attention's number beside the chart at long T."""
    mean = view.curves.summary("transformer")[0]
    T = len(mean)
    rest = mean[:-1]
    spread, above = float(rest.max() - rest.min()), float(mean[-1] - rest.max())
    most = ", and that is most of attention's number beside the chart" if above > abs(view.change["transformer"]) / 2 \
        else ""
    last = (f" The last input stands {above:.1f} orders above all the others: it alone also enters through the "
            f"query of y{_sub(T - 1)}, the output the loss reads{most}." if above >= 0.3 else "")
    if spread < 1:
        return (f"Attention's line has no such slope: every position is one step from the loss, and over "
                f"t = 0 … {T - 2} its gradient stays within {spread:.1f} orders of magnitude.{last}")
    return (f"Attention's line is not a product of per-step Jacobians, every position being one step from the "
            f"loss, yet over t = 0 … {T - 2} it spans {spread:.1f} orders here: one softmax need not share the "
            f"gradient evenly.{last}")


def _sub(n: int) -> str:
    return str(n).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


def weights_named(settings: GradientSettings, view: GradientView) -> str:
    """The initialisation the key figure's slopes depend on, named with what it gives here: the tanh RNN's
    W_hh and its spectral radius (computed), the LSTM's forget-gate bias and its gate's mean value, the
    GRU's update gate."""
    curves = view.curves
    seeds = f"{len(curves.seeds)} seed{'s' if len(curves.seeds) != 1 else ''}"
    if settings.init == "orthogonal":
        weights = (f"orthogonal W_hh times {settings.gain:g}, one per gate (the tanh RNN's has spectral radius "
                   f"{curves.radius:.2f})")
    else:
        weights = (f"PyTorch's default W_hh, uniform(±1/√H) with H = {settings.width} (the tanh RNN's has spectral "
                   f"radius {curves.radius:.2f}, mean over {seeds})")
    bias = "at PyTorch's default" if settings.forget_bias == 0 else f"+{settings.forget_bias:g} added to PyTorch's"
    return (f"Freshly initialised networks: {weights}; the LSTM's forget-gate bias {bias} (its forget gate "
            f"averages {curves.gates['lstm']:.2f}); the GRU's biases at PyTorch's default (its update gate averages "
            f"{curves.gates['gru']:.2f}). The slopes are this initialisation's: the reading below says how.")


def slopes_explained(settings: GradientSettings, view: GradientView) -> str:
    """The reading's paragraph on what sets each slope at these settings, every number read from the view
    or from `orthogonal_reference`."""
    curves, change = view.curves, view.change
    if settings.init == "orthogonal":
        rnn = (f"The tanh RNN's W_hh is orthogonal times {settings.gain:g}: it scales every vector by exactly "
               f"{settings.gain:g} (its spectral radius), and tanh's slope, at most 1, can only shrink the gradient "
               "further at each step.")
    else:
        rnn = (f"The tanh RNN's W_hh is PyTorch's default, uniform(±1/√H): its spectral radius is {curves.radius:.2f} "
               "here, so repeated on its own it would shrink a vector by about that factor per step "
               "(‖Wᵏ‖^(1/k) → ρ); tanh's slope, at most 1, shrinks the gradient further.")
        reference = orthogonal_reference(settings) if change["rnn"] is not None else None
        if reference is not None:
            rnn += (f" With orthogonal W_hh at gain {ORTHOGONAL_REFERENCE:g}, which keeps every vector's size, its "
                    f"number beside the chart would read {reference:+.1f} instead of {change['rnn']:+.1f}: that "
                    "much is tanh's slope alone.")
    bias = ("PyTorch's default draws, about 0, and σ(0) = 0.5" if settings.forget_bias == 0
            else f"+{settings.forget_bias:g} added to PyTorch's default draws, which are about 0, and σ(0) = 0.5")
    gates = ("The LSTM carries its cell state into the next step multiplied by its forget gate (Gers, Schmidhuber "
             "& Cummins 2000), the GRU its state by its update gate: a gate near 1 lets the state, and the gradient "
             "along it, through almost unchanged; a gate near 0.5 halves them at every step. Here the LSTM's "
             f"forget gate averages {curves.gates['lstm']:.2f} (its bias: {bias}; adding 1 is the usual practice, "
             "Jozefowicz, Zaremba & Sutskever 2015) and the GRU's update gate "
             f"{curves.gates['gru']:.2f} (its biases at PyTorch's default; the forget-gate bias does not touch the GRU)"
             f"{gates_compared(change)}.")
    return f"**What sets the slopes: the initialisation.** These networks are untrained. {rnn} {gates}"


def dependency_weights(settings: DependencySettings) -> str:
    """Section 3's sentence naming the loop's initialisation (the sidebar's), on which its fade depends."""
    gain = settings.gain if settings.init == "orthogonal" else 1.0
    radius = recurrent_radius(DEPENDENCY_WIDTH, settings.init, gain)
    weights = (f"orthogonal W_hh times {gain:g}" if settings.init == "orthogonal"
               else f"PyTorch's default W_hh, uniform(±1/√H) with H = {DEPENDENCY_WIDTH}")
    detail = {"lstm": f"; the LSTM's forget-gate bias +{settings.forget_bias:g} added to PyTorch's",
              "gru": "; the GRU's biases at PyTorch's default"}.get(settings.kind, "")
    return (f"How the loop's dependence changes with the distance is set by its initialisation, the sidebar's: "
            f"{weights} (a tanh RNN's of this width and seed has spectral radius {radius:.2f}){detail}.")


def training_and_gates(view: RecallView) -> str:
    """Section 4's sentence on what training did to the LSTM's forget gates, read from the shipped model
    (`trained_forget_gates`); nothing where the model is missing or its gates did not open."""
    gates = view.gates
    if gates is None or gates.trained <= gates.initial:
        return ""
    return (f"Training also opens the LSTM's forget gates: on the test sequences they average {gates.trained:.2f} "
            f"in the trained model ({gates.trained_open:.0%} of them above 0.9), against {gates.initial:.2f} in the "
            "same network freshly initialised, as its training began (PyTorch's default, no forget-gate bias added). "
            "A gate near 1 carries the cell state, and its gradient, across a step almost unchanged: the "
            "initialisation of section 1 is where training starts, not where it ends.")
