"""Lesson: the loop against the direct function — gradient flow, path length, dependency, trained models."""

import pandas as pd
import streamlit as st

from explorer.figures.common import frame_csv, subscript
from explorer.kit.draw import Section, altair_chart, counted, download_csv, measured_box, plotly_chart
from explorer.lessons.gradients.limits import attention_limits_box
from explorer.lessons.gradients.measures import LEARNING_STEPS, RECALL_MODELS
from explorer.lessons.gradients.reading import (
    attention_line,
    dependency_weights,
    slopes_explained,
    training_and_gates,
    weights_named,
)
from explorer.lessons.gradients.spec import GRADIENT_DEPENDENCY, GRADIENT_RECALL, GRADIENTS
from explorer.lessons.gradients.view import (
    DEPENDENCY_WIDTH,
    KIND_LABELS,
    dependency_numbers,
    loop_dependence,
    try_gains,
)
from explorer.serve.adapter import serve_lesson

PERCENT = {"format": "percent"}


def gradient_flow(shown) -> None:
    """1 · The key figure: the gradient against position, and the orders of magnitude lost."""
    view, settings = shown.view, shown.settings
    T, first = settings.T, view.first
    st.subheader("1 · How much gradient reaches each input?")
    chart_col, text_col = st.columns([3, 1], gap="large")
    plotly_chart(shown.figures.chart, where=chart_col, key="gradient_chart", phone_fits=True)  # a phone: whole
    chart_col.caption(weights_named(settings, view))  # the slopes depend on it: named where they are shown
    with text_col:
        # One line above the numbers, so all four stand beside the figure on a projector's first screen.
        st.markdown("**Orders of magnitude:**")
        for kind, label in KIND_LABELS.items():
            if view.change[kind] is None:
                st.metric(label, "gradient 0", help="cut off by the truncation window")
            else:
                st.metric(label, f"{view.change[kind]:+.1f}", help=f"mean over {counted(settings.n_seeds, 'seed')}; "
                          "negative: the early input gets less gradient, positive: more")
        st.caption(f"Each number is log10(‖∂L/∂x{subscript(first)}‖ / ‖∂L/∂x{subscript(T - 1)}‖), averaged over "
                   f"{counted(settings.n_seeds, 'seed')}: negative when the input at t = {first} gets less gradient "
                   f"than the one at t = {T - 1}.")


def reading(shown) -> None:
    """Under the key figure: the curves as colour, the exploding-gradient warning and how to read it."""
    view, settings = shown.view, shown.settings
    T, first, change = settings.T, view.first, view.change
    st.caption("The same numbers as colour, one row per network (blank: exactly 0):")
    plotly_chart(shown.figures.strip, width="stretch", key="gradient_strip")
    download_csv(f"gradient_flow_T{T}.csv", "Download the curves (CSV)", frame_csv, shown.figures.frame,
                 key="gradient_csv")
    if change["rnn"] is not None and change["rnn"] > 1:
        size = view.curves.summary("rnn")[0][first]  # log10 of the gradient's norm at t = first
        # Clipping as the remedy: Pascanu, Mikolov & Bengio 2013 (ICML), §3.2.
        st.warning(f"**Exploding gradient.** With an orthogonal gain of {settings.effective_gain:g} the tanh RNN's "
                   f"gradient at t = {first} is about 1e{change['rnn']:.0f} times its gradient at t = {T - 1}, "
                   f"a norm of about 1e{size:.0f}. A single update of that size would throw the weights far away; "
                   "in practice the gradient is clipped (Pascanu, Mikolov & Bengio 2013).",
                   icon=":material/trending_up:")
    factors = ", ".join(
        f"the {KIND_LABELS[kind]}'s gradient " + (
            "is cut to exactly 0" if change[kind] is None
            else f"{'shrinks' if change[kind] < 0 else 'grows'} by {abs(change[kind]):.1f} orders of magnitude")
        for kind in KIND_LABELS
    )
    st.markdown(
        f"""
    **Reading it.** The vertical axis is logarithmic: equal distances up it are equal factors (its labels
    are powers of ten). A line that falls straight means each step back costs the same factor: the
    gradient is multiplied by one more of the cell's Jacobians per step. {attention_line(view)} At these
    settings, going back from t = {T - 1} to t = {first}, {factors}.

    {slopes_explained(settings, view)}

    **Try.** Choose *orthogonal* weights and move the gain: below 1 the gradient on the tanh RNN's state
    shrinks by at least that factor at every step back (the matrix scales it by the gain, tanh's slope by
    at most 1).
    Above 1 the weights stretch the state at every step while the tanh squashes it (its slope
    is below 1); which wins depends on the gain, the width and the length. {try_gains(settings)}. Move
    the LSTM's forget-gate bias: the paragraph above gives its gate's average, the LSTM's number beside
    the chart what that does to its gradient. A
    line that explodes gives the earliest inputs the largest gradients. Set a truncation window:
    the recurrent gradients become exactly zero beyond it (the shaded region; zero has no logarithm,
    so the lines stop there). Attention ignores the window
    because it has no loop to truncate. The norms are computed in float64 with a back-propagation
    that rescales the gradient every few steps and keeps the scale as a logarithm, so even values below
    about 10⁻³⁰⁸, where float64's normal numbers end, are shown instead of 0.
    """
    )


def path_length(shown) -> None:
    """2 · Why: the unrolled loop against one parallel step."""
    T = shown.settings.T
    st.subheader("2 · Why: the path from the loss back to each input")
    diagram_col, diagram_text = st.columns([3, 1], gap="large")
    with diagram_col:
        plotly_chart(shown.figures.unrolled, width="stretch", key="unrolled", phone_layout=False)
        download_csv(f"path_lengths_T{T}.csv", "Download the path lengths (CSV)", frame_csv, shown.figures.paths,
                     key="paths_csv")
    with diagram_text:
        st.markdown(
            f"""
    Unrolled, the RNN is a chain of {T} copies of the same cell, each waiting for the one before:
    **{T} sequential steps**. The gradient of the loss travels the chain backwards, so input xₜ
    is **T − t** steps away — {T} steps for x₀, and each step multiplies the gradient by the
    cell's Jacobian once more.

    Causal attention computes every output in **one step** from all earlier inputs at once, so the
    path from the loss to any input has length **1** (one per layer in a stack). This is the lecture's
    *path length* column: O(T) for the loop, O(1) for attention.
    """
        )
    measured_box(attention_limits_box(T, shown.settings.width))


def dependency(shown) -> None:
    """3 · Which inputs each output depends on (the section's own controls are above it)."""
    T = shown.settings.T
    plotly_chart(shown.figures.figure, width="stretch", key="dependency")
    download_csv(f"dependency_T{T}.csv", "Download the matrices (CSV)", frame_csv, shown.figures.frame,
                 key="dependency_csv")
    numbers = dependency_numbers(shown)
    if shown.settings.kind == "birnn":
        along = loop_dependence(numbers, "|t − s|")
        loop = (f"The **bidirectional loop** fills the whole square, {along} both ways: an output reads "
                "earlier inputs through the forward loop and later ones through the backward loop, one step of "
                "state at a time (path length |t − s| + 1).")
    else:
        along = loop_dependence(numbers, "t − s")
        loop = (f"The **loop** fills the lower triangle, {along}: an output depends on old inputs only "
                "through many steps of the state.")
    st.markdown(
        f"""
Each cell is ‖∂yₜ/∂xₛ‖: how strongly output t (row) responds to input s (column), on one colour scale for
all three (width {DEPENDENCY_WIDTH}, the same input for all). Blank cells are exactly zero. {loop}
{dependency_weights(shown.settings)} The
**causal** attention layer fills the lower triangle evenly: in the last row its cells lie between
{numbers["att_lo"]:.2f} and {numbers["att_hi"]:.2f}, within a factor of {numbers["att_hi"] / numbers["att_lo"]:.0f},
at every distance. Take the mask away and the **encoder**
fills the whole square: every output reads the whole sequence, later inputs included.
"""
    )


def recall(shown) -> None:
    """4 · The shipped recall models: accuracy against the distance a letter must be carried."""
    view, figures = shown.view, shown.figures
    task = view.task
    if view.missing:
        st.warning("Some trained models are not available, so they are left out:\n\n"
                   + "\n".join(f"- {line}" for line in view.missing), icon=":material/hourglass_empty:")
    if not view.results:
        return
    chance = 1 / len(task.keys)
    bands, steps = figures.bands, view.steps
    chart_col, text_col = st.columns([3, 2], gap="large")
    with chart_col:
        altair_chart(figures.chart, key="recall_chart")
        st.markdown("**Accuracy over ranges of distance**")
        st.dataframe(bands, column_config={c: st.column_config.NumberColumn(c, **PERCENT) for c in bands.columns})
        download_csv("recall_accuracy_by_distance.csv", "Download accuracy by distance (CSV)", frame_csv,
                     figures.frame, key="recall_csv")
    examples = int(view.results[0][1].examples.sum())
    near_band, far_band = bands.columns[0], bands.columns[-1]

    def at(band: str) -> str:
        return ", ".join(f"{label} {bands.loc[label, band]:.0%}" for label in bands.index)

    loops = [label for label in bands.index if label != RECALL_MODELS["recall-sinusoidal-h4-l2"]]
    faded = [label for label in loops if bands.loc[label, far_band] < 2 * chance]
    held = [f"the {label} still answers {bands.loc[label, far_band]:.0%} there"
            for label in loops if label not in faded]
    reach = (f"the {' and the '.join(faded)} {'is' if len(faded) == 1 else 'are'} within twice chance at "
             f"{far_band}" if faded else f"none of the loops is within twice chance at {far_band}")
    reach = "; ".join([reach, *held])
    short = 1 - (1 - task.GEOMETRIC_STOP) ** 3  # P(gap ≤ 3) under the geometric training gaps
    attention = RECALL_MODELS["recall-sinusoidal-h4-l2"]
    if attention not in bands.index:
        direct = "A"
    elif bands.loc[attention, far_band] >= bands.loc[attention, near_band] - 0.02:  # as well, within 1 in 50
        direct = (f"Attention answers as well far away as near ({bands.loc[attention, far_band]:.0%} at {far_band}): "
                  "from the '?' it can read the first position in one step (section 2), whatever lies between, so "
                  "what it learned on gaps of mostly one or two letters works at every distance tested. A")
    else:
        direct = (f"Attention answers {bands.loc[attention, far_band]:.0%} at {far_band}, against "
                  f"{bands.loc[attention, near_band]:.0%} at {near_band}, though from the '?' it can read the first "
                  "position in one step (section 2), whatever lies between. A")
    text_col.markdown(
        f"""
    The task: *{task.description.rstrip(".").lower()}.* Each model reads a letter, then a gap of other
    letters, then '?', and must answer with the first letter; the *distance* is how far back that
    letter is. All four learned from the same examples for the same {" / ".join(map(str, steps))} steps, and
    those hold only short gaps: two thirds are a single letter, one in 6561 is longer than 8. They are
    then tested on every distance from 1 to {task.max_distance} equally often ({examples} examples,
    {examples // task.max_distance} per distance, measured when the page first needs them). Points are the
    accuracy at each distance, the lines the accuracy over bins of 8 distances. Chance is 1 in {len(task.keys)}.

    **At distances {near_band}:** {at(near_band)}. **At {far_band}:** {at(far_band)}.

    {direct}
    loop has to carry the letter through every letter of the gap, each one written into the same
    state; training seldom asked it to hold on for more than a few steps ({short:.0%} of its gaps are 3 letters
    or fewer), and how far its memory
    reaches differs by model: {reach}.

    This measures how far what was learned reaches, not the most a loop can learn: trained longer and
    with gaps up to 128 as well, loops of these kinds (with a state of 64) all learned to carry one
    letter across every one of those gaps (`pretrained/recall-experiments.md`). The table below, from
    each model's training record, gives the accuracy by distance after {", ".join(map(str, LEARNING_STEPS))}
    training steps.

    {training_and_gates(view)}
    """
    )
    if view.learning:
        table = pd.DataFrame.from_dict(dict(view.learning), orient="index").rename_axis(["model", "after step"])
        # Under both columns, at the page's width: in the text's column its ranges of distance ran off
        # the side (presenting, three of its five were cut).
        st.dataframe(table, column_config={c: st.column_config.NumberColumn(c, **PERCENT) for c in table.columns})


serve_lesson(
    GRADIENTS,
    # The product of Jacobians and its geometric fade or growth: Bengio, Simard & Frasconi 1994 (IEEE Trans.
    # Neural Networks 5(2)); Pascanu, Mikolov & Bengio 2013 (ICML), §2, with the rate set by W_hh's size.
    lead="A recurrent network reaches an early input only by going back through every step in between, "
    "so the training signal from a loss at the end is multiplied by one Jacobian per step and tends to "
    "fade (or blow up) geometrically with the distance, at a rate the weights set (Pascanu, Mikolov & "
    "Bengio 2013). An attention layer computes each output directly "
    "from all the inputs it may see, so every input is one step from the loss. Below, the four networks, "
    "freshly initialised, read the *same* random sequence and we measure how much gradient each input receives.",
    sidebar="Sequence and networks",
    sections=[
        Section("gradient", gradient_flow),
        Section("reading", reading),
        Section("paths", path_length),
        Section("dependency", dependency, part=GRADIENT_DEPENDENCY,
                title="3 · Which inputs does each output depend on?"),
        Section("recall", recall, part=GRADIENT_RECALL, title="4 · Trained networks: remembering across a gap"),
    ],
    working=lambda s: f"Back-propagating through {s.T} steps for {counted(s.n_seeds, 'seed')}…",
)
