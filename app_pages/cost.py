"""Lesson: cost — parameters, operations, sequential steps and path length, counted and measured."""

import streamlit as st
import torch

from explorer.analysis.cost import attention_cost, recurrent_cost
from explorer.analysis.timing import TIMED_LAYERS, slower_from
from explorer.figures import cost as figures
from explorer.figures.common import frame_csv, frozen
from explorer.serve.later import below_the_fold
from explorer.serve.page import lesson_page, next_lesson
from explorer.ui import altair_chart, download_csv, plotly_chart, vega_lite_spec
from explorer.views.cost import (
    COST_LAYER_DETAILS,
    MAX_PASS_S,
    complexity_rows,
    forward_times,
    layers_to_connect,
    operations_curves,
    operations_lengths,
)

WIDTHS = [8, 16, 32, 64, 128, 256, 512, 1024]
DEFAULT_WIDTH = 64
TIMING_LENGTHS = [256, 512, 1024, 2048, 4096]
TIMING_BUDGET_S = 1.0


@st.cache_data(max_entries=2 * len(WIDTHS), show_spinner=False)
def measured_times(d: int, attempt: int):
    """Forward-pass timings for T = 16, 32, …, 4096 at width d (as far as the budget goes), shared by
    every session; `attempt` lets the user ask for a fresh measurement.  The slider "up to T" only
    filters them: the measurement runs in ascending T, so the timings up to any T_max are the ones a
    shorter run would have made, and moving that slider never starts the stopwatch again."""
    return forward_times(tuple(2**p for p in range(4, 13)), d, TIMING_BUDGET_S)


# One setting's tables and figures, made once and shared by every session (never changed): a rerun at a
# setting already seen only draws them.  Chart specs carry their data ready to send.
@st.cache_resource(show_spinner=False, max_entries=64)
def table_views(T: int, d: int, k: int, n_layers: int):
    rows = complexity_rows(T, d, k, n_layers)
    return rows, figures.complexity_frame(rows, n_layers), frozen(figures.cost_bars(rows))


@st.cache_resource(show_spinner=False, max_entries=64)
def crossover_views(T: int, d: int):
    T_values = operations_lengths(T, d)
    operations = figures.operations_frame(operations_curves(d, T_values), T_values)
    return operations, vega_lite_spec(figures.operations_chart(operations, d=d, T=T))


@st.cache_resource(show_spinner=False, max_entries=4 * len(WIDTHS) * len(TIMING_LENGTHS))
def stopwatch_views(d: int, attempt: int, T_max: int):
    timings = [t for t in measured_times(d, attempt) if T_max >= t.T]
    times = figures.timing_frame(timings, TIMED_LAYERS)
    return timings, times, vega_lite_spec(figures.timing_chart(times, TIMED_LAYERS))


@st.cache_resource(show_spinner=False)
def timed_widths() -> set[int]:
    """The widths someone has started the stopwatch at on this server (at most len(WIDTHS)); the
    default width is always timed.  Shared by every session."""
    return set()


def table_section(rows, table, exact: dict, T: int, d: int, k: int, n_layers: int) -> None:
    """The exact table under the key figure, and how to read it."""
    st.dataframe(table, hide_index=True, key="complexity", column_config={
        name: st.column_config.NumberColumn(name, format="localized", help=help_text)
        for name, help_text in exact.items()
    })
    st.caption(" · ".join(f"**{row.label}**: {COST_LAYER_DETAILS[row.layer]}" for row in rows))
    download_csv(f"complexity_T{T}_d{d}_k{k}_N{n_layers}.csv", "Download the table (CSV)", frame_csv, table,
                 key="complexity_csv")
    needed = layers_to_connect(T, k)
    seen = 1 + n_layers * (k - 1)
    stack_note = ""
    if seen < T:
        what = "One convolution" if n_layers == 1 else f"A stack of {n_layers} convolutions"
        stack_note = (f" {what} sees only the last {seen} of the {T} positions, so the CNN's path length is "
                      f"given for the {needed} layers it would need to reach the first one.")
    st.markdown(
        f"""
    **Reading it.** Each big-O column is followed by the exact count. *Multiplications* are those of
    the matrix products (the lecture's "operations"; softmax, activations and normalisation are left
    out); *parameters* include biases and LayerNorm scales, and *PyTorch count* counts them again
    with `count_parameters` on the real modules built at this size (on PyTorch's "meta" device, which
    allocates no memory). *Sequential steps* are the steps
    that must run one after another; *path length* is the number of steps between the last output
    and the first input. In a stack, layer n + 1 can start as soon as layer n has produced its first
    output, so N loops take T + N − 1 steps and N attention layers take N.{stack_note}

    The CNN's O(T) sequential steps follow the lecture; the original paper (Vaswani et al., 2017,
    Table 1) counts a convolution as O(1) sequential operations, since every position of one layer
    can be computed at once — what keeps the CNN's row long is its path, O(T/k).
    """
    )


# --- the crossover -------------------------------------------------------------------------------------------
def crossover_section(T: int, d: int) -> None:
    """Where T·d² meets T²·d: the operations of both layers against T."""
    st.subheader("Where T·d² meets T²·d")
    operations, chart = crossover_views(T, d)
    chart_col, text_col = st.columns([3, 2], gap="large")
    with chart_col:
        altair_chart(chart, key="operations_chart")
        download_csv(f"operations_d{d}.csv", "Download the curves (CSV)", frame_csv, operations,
                     key="operations_csv")
    rnn_layer, attention_layer = recurrent_cost("rnn", T, d), attention_cost(T, d)
    with text_col:
        bigger = "T²·d" if d < T else ("T·d²" if d > T else "neither")
        st.markdown(
            f"""
    A recurrent layer does d² work per position (the state times W_hh): **T·d²**. Attention compares
    every pair of positions with a d-long dot product: **T²·d**. The two are equal at **T = d**; at
    your T = {T} and d = {d}, T·d² = {T * d * d:,} and T²·d = {T * T * d:,}, so {bigger} is larger.

    The exact counts (solid lines) add what the big-O leaves out. This attention layer also projects
    the sequence four times (Q, K, V, output: 4·T·d²), so it always multiplies more than a tanh RNN of
    the same width (2·T·d²): at your sizes {attention_layer.multiplications:,} against
    {rnn_layer.multiplications:,} per layer. Its T²·d part takes over above T = d — which is why
    long contexts are expensive, and why short ones (T < d, as in many sentences) are cheap.
    """
        )


# --- the stopwatch -------------------------------------------------------------------------------------------
def measure_again() -> None:
    st.session_state["timing_attempt"] += 1


def time_this_width(width: int) -> None:
    timed_widths().add(width)


def stopwatch_section(d: int, T_max: int) -> None:
    """Measured on this CPU: one forward pass of each layer, timed (once per width, shared)."""
    st.subheader("Measured on this CPU")
    attempt = st.session_state.setdefault("timing_attempt", 0)


    if d != DEFAULT_WIDTH and d not in timed_widths():
        # A measurement holds about a second of the server's CPU, which every user of the server shares:
        # the default width is timed once for everyone, any other width when someone asks for it.
        st.markdown(f"The stopwatch has not run at width d = {d} on this server yet. It takes about "
                    f"{TIMING_BUDGET_S:.0f} s of the server's CPU, which everyone using it shares, so it starts "
                    "when you ask; after that the timings are kept for everyone.")
        st.button(f"Start the stopwatch at d = {d}", icon=":material/timer:", key="time_width", type="primary",
                  on_click=time_this_width, args=(d,))
        st.stop()

    with st.spinner(f"Timing forward passes for T up to {T_max} (at most about {TIMING_BUDGET_S:.0f} s)…"):
        timings, times, chart = stopwatch_views(d, attempt, T_max)
    chart_col, text_col = st.columns([3, 2], gap="large")
    with chart_col:
        altair_chart(chart, key="timing_chart")
        download_csv(f"timings_d{d}.csv", "Download the timings (CSV)", frame_csv, times, key="timing_csv")
        st.button("Measure again", icon=":material/timer:", key="measure_again", on_click=measure_again,
                  help="Timings are cached per setting; this measures once more for you.")
    skipped = int(times["milliseconds"].isna().sum())
    slower = slower_from(timings, "attention", "rnn")
    measured = times.dropna(subset=["milliseconds"])
    longest = measured[measured["layer"] == TIMED_LAYERS["rnn"]].tail(1)
    with text_col:
        per_step = (f"At T = {int(longest['T'].iloc[0])} torch's RNN needs "
                    f"{float(longest['microseconds per position'].iloc[0]):.1f} µs per step, one step after "
                    "another. " if len(longest) else "")
        crossover = (f"From T = {slower} on, the attention layer is the slower one here. " if slower else
                     "In this range the attention layer is never the slower one here. ")
        st.markdown(
            f"""
    One forward pass of one layer at width d = {d} on a batch of one sequence, in float32, the best of
    up to five runs after a warm-up, on {torch.get_num_threads()} CPU thread(s). {per_step}{crossover}

    This is the lesson's fine print. On one thread nothing runs in parallel, so attention pays its
    full T²·d and wins only while T is small, where the loop's per-step overhead dominates. On a GPU
    the T² comparisons of one layer run at the same time and the wall time follows the *sequential
    steps* instead — 1 for attention, T for the loop — which is what made transformers fast to train.
    The Python loop (this app's RecurrentNet, written step by step for the lessons) shows how much of
    an RNN's time is overhead per step.
    """
        )
        if skipped:
            st.caption(f"{skipped} measurement(s) left out to stay within the {TIMING_BUDGET_S:.0f} s budget "
                       f"(the largest T for the slowest layers), or because one forward pass would take more than "
                       f"{MAX_PASS_S * 1000:.0f} ms. Timings are shared by everyone using this server "
                       "and measured once per setting.")


controls, lesson = lesson_page(
    "cost",
    "Cost: parameters, operations, steps",
    "Attention is not free. Compared with a recurrent layer it has a few times more parameters and, "
    "for long sequences, many more multiplications: every position is compared with every other. "
    "What it saves is *sequential* work — the loop must run its T steps one after another, attention "
    "runs in one — and the *path* the gradient travels. Here are the lecture's counts, exactly, for "
    "your sizes, and a stopwatch on this machine.",
)
side = st.sidebar
side.header("Sizes")
T = controls.slider("Sequence length T", 2, 4096, 512, 1, "T", where=side)
d = controls.select_slider("Width d", WIDTHS, DEFAULT_WIDTH, "d", where=side)
k = controls.slider("Convolution kernel size k", 2, 9, 3, 1, "k", where=side)
n_layers = controls.slider("Layers N", 1, 24, 1, 1, "layers", where=side,
                           help="1 reproduces the lecture's per-layer table; more stacks N identical layers.")
side.header("Stopwatch")
T_max = controls.select_slider("Time sequences up to T =", TIMING_LENGTHS, 2048, "time_T", where=side)
controls.report()
if not lesson.revealed:
    st.stop()

# --- the table ---------------------------------------------------------------------------------------------
st.subheader(f"The complexity table for T = {T}, d = {d}, k = {k}" + (f", N = {n_layers}" if n_layers > 1 else ""))
rows, table, bars = table_views(T, d, k, n_layers)
exact = {"exact": "parameters (library formula)", "PyTorch count": "count_parameters on the PyTorch modules",
         "multiplications": "multiplications in the matrix products", "steps": "sequential steps",
         "path": "steps from the last output to the first input"}
plotly_chart(bars, key="cost_bars")  # the key figure first, the exact table under it
lesson.explain()

below_the_fold(table_section, rows, table, exact, T, d, k, n_layers)
below_the_fold(crossover_section, T, d)
below_the_fold(stopwatch_section, d, T_max)
next_lesson("cost")
