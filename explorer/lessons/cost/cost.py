"""Lesson: cost — parameters, operations, sequential steps and path length, counted and measured."""

import streamlit as st

from explorer.analysis.cost import attention_cost, recurrent_cost
from explorer.analysis.timing import TIMED_LAYERS
from explorer.figures.common import frame_csv
from explorer.kit.draw import Button, Section, altair_chart, counted, download_csv, measured_box, plotly_chart
from explorer.lessons.cost.counts import COST_LAYER_DETAILS, MAX_PASS_S, layers_to_connect
from explorer.lessons.cost.spec import COST, COST_CROSSOVER, COST_STOPWATCH
from explorer.lessons.cost.view import TIMING_BUDGET_S, timed
from explorer.serve.adapter import serve_lesson

EXACT = {"exact": "parameters (library formula)", "PyTorch count": "count_parameters on the PyTorch modules",
         "multiplications": "multiplications in the matrix products", "steps": "sequential steps",
         "path": "steps from the last output to the first input"}


def bars(shown) -> None:
    """The key figure: the complexity table as bars."""
    s = shown.settings
    st.subheader(f"The complexity table for T = {s.T}, d = {s.d}, k = {s.k}"
                 + (f", N = {s.n_layers}" if s.n_layers > 1 else ""))
    plotly_chart(shown.figures.bars, key="cost_bars", phone_fits=True)  # two panels a row fit a phone


def table(shown) -> None:
    """The exact table under the key figure, and how to read it."""
    s, rows, frame = shown.settings, shown.view.rows, shown.figures.table
    st.dataframe(frame, hide_index=True, key="complexity", column_config={
        name: st.column_config.NumberColumn(name, format="localized", help=text) for name, text in EXACT.items()
    })
    st.caption(" · ".join(f"**{row.label}**: {COST_LAYER_DETAILS[row.layer]}" for row in rows))
    download_csv(f"complexity_T{s.T}_d{s.d}_k{s.k}_N{s.n_layers}.csv", "Download the table (CSV)", frame_csv, frame,
                 key="complexity_csv")
    projections = 4 * s.T * s.d * s.d / attention_cost(s.T, s.d).multiplications  # the rest: 2·T²·d
    seen, stack_note = 1 + s.n_layers * (s.k - 1), ""
    if seen < s.T:
        what = "One convolution" if s.n_layers == 1 else f"A stack of {s.n_layers} convolutions"
        stack_note = (f" {what} sees only the last {seen} of the {s.T} positions, so the CNN's path length is "
                      f"given for the {layers_to_connect(s.T, s.k)} layers it would need to reach the first one.")
    st.markdown(
        f"""
    **Reading it.** Each big-O column is followed by the exact count. *Multiplications* are those of
    the matrix products (the lecture's "operations"; softmax, activations and normalisation are left
    out); *parameters* include biases and the LayerNorms' scales and shifts, and *PyTorch count* counts them again
    with `count_parameters` on the real modules built at this size (on PyTorch's "meta" device, which
    allocates no memory). *Sequential steps* are the steps
    that must run one after another; *path length* is the number of steps between the last output
    and the first input. In a stack, layer n + 1 can start as soon as layer n has produced its first
    output, so N loops take T + N − 1 steps, and N attention layers or N convolutions take N.{stack_note}

    The lecture's table gives a convolution O(T) sequential steps. Here it has O(1), as in the original
    paper (Vaswani et al., 2017, Table 1): every position of one convolution is computed at once (the
    box below measures it). What keeps the CNN's row long is its path, O(T/k).

    The lecture's table (and that paper's Table 1) gives self-attention O(T²·d) operations: the scores
    and the weighted sum alone. The layer counted here also has its Q, K, V and output projections,
    4·T·d², so its row reads **O(T·d² + T²·d)**: at your T = {s.T} and d = {s.d}, {projections:.0%} of
    its multiplications are in the projections.
    """
    )
    for box in shown.view.boxes:
        measured_box(box)


def crossover(shown) -> None:
    """Where T·d² meets T²·d: the operations of both layers against T."""
    T, d = shown.settings.T, shown.settings.d
    st.subheader("Where T·d² meets T²·d")
    chart_col, text_col = st.columns([3, 2], gap="large")
    with chart_col:
        altair_chart(shown.figures.chart, key="operations_chart")
        download_csv(f"operations_d{d}.csv", "Download the curves (CSV)", frame_csv, shown.figures.operations,
                     key="operations_csv")
    rnn_layer, attention_layer = recurrent_cost("rnn", T, d), attention_cost(T, d)
    bigger = "T²·d" if d < T else ("T·d²" if d > T else "neither")
    text_col.markdown(
        f"""
    A recurrent layer multiplies each position by two d × d matrices (W_ih on the input, W_hh on the
    state): **T·d²**, up to the factor 2. Attention's own
    step compares every pair of positions with a d-long dot product: **T²·d**. The two are equal at
    **T = d**; at your T = {T} and d = {d}, T·d² = {T * d * d:,} and T²·d = {T * T * d:,}, so {bigger} is
    larger.

    The exact counts (solid lines) add what these two terms leave out. The attention layer also projects
    the sequence four times (Q, K, V, output: 4·T·d², the T·d² in its row's O(T·d² + T²·d)), so it always
    multiplies more than a tanh RNN of the same width (2·T·d²): at your sizes
    {attention_layer.multiplications:,} against {rnn_layer.multiplications:,} per layer,
    {attention_layer.multiplications / rnn_layer.multiplications:.3g} times as many (2 + T/d). The notes
    say attention does fewer operations when T < d; that compares the two terms, not the two layers. In the exact count
    its quadratic part, 2·T²·d, outgrows the projections' 4·T·d² above T = 2·d — which is why long
    contexts are expensive; in short ones (T < 2·d, as in many sentences) the projections are most of
    the work.
    """
    )


def stopwatch(shown) -> None:
    """Measured on this CPU: one forward pass of each layer, timed (once per width, shared)."""
    view, times = shown.view, shown.figures.times
    chart_col, text_col = st.columns([3, 2], gap="large")
    with chart_col:
        altair_chart(shown.figures.chart, key="timing_chart")
        download_csv(f"timings_d{view.settings.d}.csv", "Download the timings (CSV)", frame_csv, times,
                     key="timing_csv")
    skipped = int(times["milliseconds"].isna().sum())
    measured = times.dropna(subset=["milliseconds"])
    rnn, loop = ({int(T): ms for T, ms in measured.loc[measured["layer"] == TIMED_LAYERS[kind], ["T", "milliseconds"]]
                  .itertuples(index=False)} for kind in ("rnn", "rnn-loop"))
    longest = max(rnn, default=None)
    per_step = (f"At T = {longest} torch's RNN needs {1000 * rnn[longest] / longest:.1f} µs per step, one step "
                "after another" + (f"; this app's Python loop needs {loop[longest] / rnn[longest]:.0f} times as "
                                   "long, overhead per step. " if longest in loop else ". ")
                if longest else "")
    slower = view.slower
    threads = counted(view.threads, "CPU thread")
    verdict = (f"From T = {slower} on, the attention layer is the slower one here: on {threads} "
               "the time follows the multiplications more than the sequential steps, and attention's T·d² + T²·d "
               "grows faster than the loop's T·d²." if slower else
               f"The attention layer was the slower one at T = {', '.join(map(str, view.slower_at))} only, not from "
               "one length on: here the two are close, and the machine's other work can tip either way."
               if view.slower_at else
               "In this range the attention layer is never the slower one here: its T·d² + T²·d multiplications "
               "have not outgrown the loop's cost per step.")
    text_col.markdown(
        f"""
    One forward pass of one layer at width d = {view.settings.d} on a batch of one sequence, in float32, the best
    of up to five runs after a warm-up, on {counted(view.threads, 'CPU thread')}. {per_step}{verdict}

    This is the lesson's fine print. On a GPU, as long as it has the cores for them, the T² comparisons
    of one layer run at the same time and the wall time follows the *sequential steps* instead — 1 for
    attention, T for the loop — which is what made transformers fast to train (Vaswani et al., 2017,
    section 4 and table 2: a fraction of the training cost of recurrent and convolutional models).
    """
    )
    if skipped:
        text_col.caption(f"{counted(skipped, 'measurement')} left out to stay within the {TIMING_BUDGET_S:.0f} s "
                         f"budget (the largest T for the slowest layers), or because one forward pass would take "
                         f"more than {MAX_PASS_S * 1000:.0f} ms. Timings are shared by everyone using this server and "
                         "measured once per width.")


def ask_to_time(settings):
    """The stopwatch holds about a second of the server's CPU, which every visitor shares: the
    default width is timed once for everyone, any other width when someone asks for it."""
    if timed(settings.d):
        return None
    return (f"The stopwatch has not run at width d = {settings.d} on this server yet. It takes about "
            f"{TIMING_BUDGET_S:.0f} s of the server's CPU, which everyone using it shares, so it starts when you "
            "ask; after that the timings are kept for everyone.",
            Button(f"Start the stopwatch at d = {settings.d}", "time_width", icon=":material/timer:"))


serve_lesson(
    COST,
    lead="Attention is not free. Compared with a tanh RNN layer of the same width it has twice the parameters and, "
    "for long sequences, many more multiplications: every position is compared with every other. "
    "What it saves is *sequential* work — the loop must run its T steps one after another, attention "
    "runs in one — and the *path* the gradient travels. Here are the lecture's counts, exactly, for "
    "your sizes, and a stopwatch on this machine.",
    sidebar="Sizes",
    sections=[
        Section("bars", bars), Section("table", table), Section("crossover", crossover, part=COST_CROSSOVER),
        Section("stopwatch", stopwatch, part=COST_STOPWATCH, title="Measured on this CPU", ask=ask_to_time,
                working=lambda s: f"Timing forward passes at d = {s.d} (at most about {TIMING_BUDGET_S:.0f} s)…",
                again=Button("Measure again", "measure_again", icon=":material/timer:",
                             help="Timings are kept per width; this measures once more for you.")),
    ],
)
