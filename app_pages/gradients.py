"""Lesson: the loop against the direct function — gradient flow, path length, dependency, trained models."""

import streamlit as st

from app_pages.gradients_recall import recall_section
from explorer.figures import gradients as figures
from explorer.figures.common import frame_csv, frozen, subscript
from explorer.figures.unrolled import path_frame, unrolled_figure
from explorer.model.rnn import RECURRENT_KINDS
from explorer.ui import (
    altair_chart,
    below_the_fold,
    download_csv,
    lesson_page,
    next_lesson,
    plotly_chart,
    vega_lite_spec,
)
from explorer.views.gradients import (
    KIND_LABELS,
    dependency_views,
    gradient_curves,
    path_lengths,
)

LENGTHS = [8, 16, 32, 64, 128, 256, 512]
WIDTHS = [8, 16, 32, 64]
INITS = ["default", "orthogonal"]
WINDOWS = ["full", "1", "2", "4", "8", "16", "32", "64", "128", "256"]
DEPENDENCY_LENGTHS = [8, 16, 24, 32, 48, 64]
DEPENDENCY_WIDTH = 16
DEPENDENCY_KEYS = ("dep_T", "dep_kind")  # section 3's controls, made beside it (a fragment)

# One setting's frames and figures, made once and shared by every session (never changed): a rerun at a
# setting already seen only draws them.  Chart specs carry their data ready to send.
@st.cache_resource(show_spinner=False, max_entries=32)
def gradient_views(T: int, width: int, init: str, gain: float, window: int | None, n_seeds: int):
    curves = gradient_curves(T, width, init, gain, window, n_seeds)
    paths = {kind: path_lengths(T, kind) for kind in KIND_LABELS}
    frame = figures.gradient_frame(curves, KIND_LABELS, paths)
    return (curves, paths, frame, vega_lite_spec(figures.gradient_chart(frame)),
            frozen(figures.gradient_strip(frame)))


@st.cache_resource(show_spinner=False, max_entries=len(LENGTHS))
def unrolled_view(T: int):
    return frozen(unrolled_figure(path_lengths(T, "rnn"), path_lengths(T, "transformer")))


@st.cache_resource(show_spinner=False, max_entries=32)
def dependency_panels(kind: str, T: int, init: str, gain: float):
    views = dependency_views(kind, T, DEPENDENCY_WIDTH, init, gain)
    panels = [(f"{KIND_LABELS[kind]}: the loop", views.recurrent), ("causal attention: masked", views.causal),
              ("encoder attention: unmasked", views.unmasked)]
    return panels, frozen(figures.dependency_figure(panels))


def strip_section(frame, strip, T: int) -> None:
    """Under the key chart: the same curves as colour, and their download."""
    st.caption("The same numbers as colour, one row per network (blank: exactly 0):")
    plotly_chart(strip, width="stretch", key="gradient_strip")
    download_csv(f"gradient_flow_T{T}.csv", "Download the curves (CSV)", frame_csv, frame, key="gradient_csv")


controls, lesson = lesson_page(
    "gradients",
    "Gradient flow: loop vs attention",
    "A recurrent network reaches an early input only by going back through every step in between, "
    "so the training signal from a loss at the end is multiplied by one Jacobian per step: it fades "
    "(or blows up) geometrically with the distance. An attention layer computes each output directly "
    "from all the inputs it may see, so every input is one step from the loss. Below, the four networks "
    "read the *same* random sequence and we measure how much gradient each input receives.",
)
side = st.sidebar
side.header("Sequence and networks")
T = controls.select_slider("Sequence length T", LENGTHS, 64, "T", where=side)
width = controls.select_slider("Width (size of x_t and of the state)", WIDTHS, 32, "width", where=side)
init = controls.radio("Recurrent weights W_hh", INITS, 0, "init", where=side, horizontal=True,
                      help="default: PyTorch's uniform initialisation. orthogonal: every recurrent matrix "
                           "(one per gate) is a random orthogonal matrix times the gain below.")
gain = controls.slider("Orthogonal gain", 0.1, 8.0, 1.0, 0.1, "gain", where=side, disabled=init != "orthogonal",
                       help="Below 1 the recurrent matrix shrinks the state (and its gradient) at every step; "
                            "above 1 it stretches it. Try 3 for the tanh RNN and 6 for the LSTM and GRU.")
window_text = controls.select_slider("Truncated BPTT window", WINDOWS, "full", "bptt", where=side,
                                     help="Back-propagate through only the last n steps, as recurrent "
                                          "networks are usually trained; 'full' goes back to the start.")
n_seeds = controls.slider("Random seeds", 1, 5, 3, 1, "seeds", where=side,
                          help="Each seed draws new weights and a new input; the line is the mean of "
                               "log10 ‖∂L/∂x_t‖ and the band ± one standard deviation.")
notes = st.container()  # the link's notes, written last: section 3's controls are made further down
if not lesson.revealed:
    with notes:
        controls.report(later=DEPENDENCY_KEYS)
    st.stop()

window = None if window_text == "full" else int(window_text)
effective_gain = gain if init == "orthogonal" else 1.0

# --- 1. the gradient against position ----------------------------------------------------------------
st.subheader("1 · How much gradient reaches each input?")
with st.spinner(f"Back-propagating through {T} steps for {n_seeds} seed(s)…"):
    curves, paths, frame, chart, strip = gradient_views(T, width, init, effective_gain, window, n_seeds)
chart_col, text_col = st.columns([3, 1], gap="large")
with chart_col:
    altair_chart(chart, key="gradient_chart")
    lesson.explain()
    below_the_fold(strip_section, frame, strip, T)

first = 1 if T > 2 else 0
change = {}  # log10 of ‖∂L/∂x_first‖ / ‖∂L/∂x_{T−1}‖, None where the gradient is cut to 0
for kind in KIND_LABELS:
    mean, _, _ = curves.summary(kind)
    change[kind] = None if mean[first] == float("-inf") else float(mean[first] - mean[T - 1])
with text_col:
    st.markdown(f"**Orders of magnitude** between the gradient at t = {first} and at t = {T - 1}, "
                f"log10(‖∂L/∂x{subscript(first)}‖ / ‖∂L/∂x{subscript(T - 1)}‖):")
    for kind, label in KIND_LABELS.items():
        if change[kind] is None:
            st.metric(label, "gradient 0", help="cut off by the truncation window")
        else:
            st.metric(label, f"{change[kind]:+.1f}", help=f"mean over {n_seeds} seed(s); "
                      "negative: the early input gets less gradient, positive: more")

if change["rnn"] is not None and change["rnn"] > 1:
    st.warning(f"**Exploding gradient.** With an orthogonal gain of {effective_gain:g} the tanh RNN's gradient at "
               f"t = {first} is about 1e{change['rnn']:.0f} times its gradient at t = {T - 1}. A single update "
               "of that size would throw the weights far away; in practice the gradient is clipped.",
               icon=":material/trending_up:")
factors = ", ".join(
    f"the {KIND_LABELS[kind]}'s gradient " + (
        "is cut to exactly 0" if change[kind] is None
        else f"{'shrinks' if change[kind] < 0 else 'grows'} by {abs(change[kind]):.1f} orders of magnitude")
    for kind in KIND_LABELS
)
st.markdown(
    f"""
**Reading it.** The vertical axis is logarithmic: each grid step is a factor of ten. A line that
falls straight means the same factor is lost at every step — the signature of a product of one
Jacobian per time step. The LSTM's and GRU's gates let part of the state pass through unchanged,
so they usually lose less per step than the tanh RNN; attention's line has no such slope, because
the loss reaches every position in a single step. At these settings, going back from t = {T - 1}
to t = {first}, {factors}.

**Try.** Choose *orthogonal* weights and move the gain: below 1 the tanh RNN's gradient dies
faster; around 1.6 the stretch of the weights and the squash of the tanh (its slope is below 1)
roughly cancel and the line turns flat; at 3 it explodes — the earliest inputs get the largest
gradients. The gated LSTM and GRU need a gain of about 6 to explode. Set a truncation window:
the recurrent gradients become exactly zero beyond it (the shaded region; zero has no logarithm,
so the lines stop there). Attention ignores the window
because it has no loop to truncate. The norms are computed in float64 with a back-propagation
that rescales the gradient at every step and keeps the scale as a logarithm, so even values below
10⁻³⁰⁸, the smallest float64 number, are shown exactly instead of as 0.
"""
)

# --- 2. why: the unrolled loop against one parallel step -----------------------------------------------
def path_section(T: int, paths: dict) -> None:
    """Section 2: the unrolled loop against one parallel step."""
    st.subheader("2 · Why: the path from the loss back to each input")
    diagram_col, diagram_text = st.columns([3, 1], gap="large")
    with diagram_col:
        plotly_chart(unrolled_view(T), width="stretch", key="unrolled")
        download_csv(f"path_lengths_T{T}.csv", "Download the path lengths (CSV)", frame_csv,
                     path_frame(paths["rnn"], paths["transformer"]), key="paths_csv")
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


below_the_fold(path_section, T, paths)


# --- 3. the dependency matrix --------------------------------------------------------------------------
@st.fragment
def dependency_section(init: str, effective_gain: float) -> None:
    """Section 3 with its own two controls beside it: changing them reruns (and resends) this section only."""
    st.subheader("3 · Which inputs does each output depend on?")
    length_col, kind_col, _ = st.columns([2, 2, 1], gap="large")
    dep_T = controls.select_slider("Sequence length for the matrices", DEPENDENCY_LENGTHS, 32, "dep_T",
                                   where=length_col)
    dep_kind = controls.radio("Recurrent network in the matrices", list(RECURRENT_KINDS), 0, "dep_kind",
                              where=kind_col, horizontal=True)
    with st.spinner(f"Computing {3 * dep_T * dep_T} Jacobian blocks…"):
        panels, figure = dependency_panels(dep_kind, dep_T, init, effective_gain)
    plotly_chart(figure, width="stretch", key="dependency")
    download_csv(f"dependency_T{dep_T}.csv", "Download the matrices (CSV)", frame_csv,
                 figures.dependency_frame(panels), key="dependency_csv")
    st.markdown(
        f"""
Each cell is ‖∂yₜ/∂xₛ‖: how strongly output t (row) responds to input s
(column), on one colour scale for all three (width {DEPENDENCY_WIDTH}, the same input for all). Blank cells
are exactly zero. The **loop** fills the lower triangle, bright along the diagonal and fading with
the distance t − s: an output depends on old inputs only through many steps of the state. The
**causal** attention layer fills the same triangle evenly — an output depends on an input 30 steps
back about as much as on its neighbour. Take the mask away and the **encoder** fills the whole
square: every output reads the whole sequence, later inputs included.
"""
    )


below_the_fold(dependency_section, init, effective_gain, controls=controls, keys=DEPENDENCY_KEYS)
below_the_fold(recall_section)
with notes:
    controls.report()
next_lesson("gradients")
