"""Lesson: positional encodings — the matrices, their geometry, and why attention needs them.

Sections 1 and 2 (the matrix and its geometry) draw the page's view; 3 and 4 (the shipped reversal
models) and 5 (the relative schemes) have controls of their own.  The lesson is declared in
explorer.lessons.positions.view; its prose is in lessons/positions.md, its numbers read from the views
(explorer.lessons.positions.claims)."""

import functools

import numpy as np
import pandas as pd
import streamlit as st

from explorer.figures.common import matrix_csv
from explorer.kit.claims import listed
from explorer.kit.draw import (
    Button,
    Preset,
    Section,
    altair_chart,
    claimed,
    escape_markdown,
    lesson_text,
    measured_box,
    plotly_chart,
)
from explorer.lessons.positions import claims as facts
from explorer.lessons.positions.encodings import LEARNED_MODEL, column_names
from explorer.lessons.positions.spec import POSITION_MODELS, POSITION_RELATIVE, POSITIONS
from explorer.lessons.positions.view import CLASSIC, LECTURE
from explorer.serve.adapter import serve_lesson

text = functools.partial(lesson_text, "positions")  # text("section name", field=value, …)
RIGHT, WRONG = ":green[:material/check_circle: right]", ":red[:material/cancel: wrong]"


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def matrix(shown) -> None:
    """1 · The key figure: the encoding matrix, the numbers of a small one, and what it is."""
    view, m = shown.view, shown.view.matrix
    n_rows, n_cols = m.shape
    plan, kind = m.plan, m.kind
    st.subheader("1 · The encoding matrix: one row per position")
    if view.problem:
        st.error(escape_markdown(view.problem), icon=":material/error:")
    if m.table is None and n_cols > 32:  # a wide matrix gets the full width, the text goes below it
        matrix_col = st.container()
        formula_col, text_col = st.columns(2, gap="large") if kind == "sinusoidal" else (st.container(),) * 2
    else:
        matrix_col, text_col = st.columns([3, 2], gap="large")
        formula_col = matrix_col
    with matrix_col:
        plotly_chart(shown.figures.matrix, width="stretch", key="matrix")
        if plan.downsampled:
            st.caption(f":material/photo_size_select_small: **Downsampled for drawing:** every "
                       f"{ordinal(plan.row_step)} position and every {ordinal(plan.col_step)} dimension — "
                       f"{plan.shape[0]} × {plan.shape[1]} of the {n_rows} × {n_cols} cells. Hover shows the true "
                       "position and dimension.")
        names = column_names(n_cols, m.base)
        rows = list(view.row_labels or [str(p) for p in plan.rows])
        what = "full matrix" if not plan.downsampled else f"drawn sample ({plan.shape[0]} × {plan.shape[1]} cells)"
        st.download_button(f"Download the {what} (CSV)", icon=":material/download:", mime="text/csv",
                           file_name=f"positional_{kind}_{n_rows}x{n_cols}.csv", on_click="ignore",
                           data=lambda: matrix_csv(np.round(m.drawn, 8), rows, [names[j] for j in plan.cols],
                                                   corner="position").encode())
    if kind == "sinusoidal":
        formula_col.markdown(text("matrix: sinusoidal formula"))
    with text_col:
        if m.table is not None:
            # A table, not a data grid: its headers wrap, so a narrow column shows every dimension.
            # A fixed uuid: pandas draws a random one per Styler, and the table's bytes would change every run
            st.table(pd.DataFrame(np.round(m.table, 2), index=rows, columns=names).style.format("{:.2f}")
                     .set_uuid("lecture_table"))
            st.caption("The same numbers, rounded to two decimals. Column headers give the function of p.")
        if kind == "sinusoidal":
            st.markdown(text("matrix: why sines and cosines"))
            if view.lecture_table:
                st.markdown(text("matrix: lecture table", **facts.lecture_divisor(view)))
        else:
            st.markdown(text(f"matrix: {kind}", n_rows=n_rows, n_cols=n_cols, model=LEARNED_MODEL,
                             **facts.table_facts(view)))
            vanishes = claimed(POSITIONS, "index_vanishes", shown) if kind == "index" else None
            if vanishes:
                st.markdown(vanishes)
        scaled = "are added unscaled (as in BERT)" if kind == "MiniLM" else "are multiplied by √d"
        st.caption(f"Source: {m.source}. Token embeddings {scaled} before the position is added.")


def geometry(shown) -> None:
    """2 · The similarity of every two positions, by offset, and the wavelengths of the pairs."""
    view, m, figures = shown.view, shown.view.matrix, shown.figures
    n_rows, share, kind = m.shape[0], m.offset_share, m.kind
    st.subheader("2 · Geometry: what comparing two positions reveals")
    sim_col, offset_col = st.columns(2, gap="large")
    with sim_col:
        plotly_chart(figures.similarity, width="stretch", key="similarity_matrix")
        if len(m.sim_rows) < n_rows:
            st.caption(f":material/photo_size_select_small: Drawn for every {ordinal(int(m.sim_rows[1]))} position "
                       f"({len(m.sim_rows)} × {len(m.sim_rows)} of {n_rows} × {n_rows}).")
    with offset_col:
        if figures.offsets is not None:
            altair_chart(figures.offsets, key="offset_curves")
        if share is None:
            verdict = ("every pair of positions compares the same, so the similarity carries no position at all"
                       if kind not in ("learned", "MiniLM") else "the similarity is constant")
            st.markdown(f"**The offset explains:** nothing to explain — {verdict}.")
        else:
            st.markdown(f"**The offset between two positions explains {share:.1%} of this matrix's variation** "
                        "(share of the variance left after replacing every diagonal by its mean).")
    odd = kind == "sinusoidal" and m.shape[1] % 2 == 1  # a last sine without its cosine
    st.markdown(text(f"geometry: {kind}" + (", odd width" if odd else ""), **facts.neighbour_facts(view)))
    if figures.wavelengths is not None:
        wave_col, wave_text = st.columns([3, 2], gap="large")
        altair_chart(figures.wavelengths, where=wave_col, key="wavelengths")
        wave_text.markdown(text("wavelengths", **facts.wavelength_facts(view)))
    for box in view.boxes:
        measured_box(box)


def shuffle(shown) -> None:
    """3 · The same letters shuffled, through the encoder chosen; then 4's table of every model."""
    view, figures = shown.view, shown.figures
    if view.problems:  # they quote what the user typed: shown as literal text
        st.warning("\n".join(f"- {escape_markdown(problem)}." for problem in view.problems), icon=":material/warning:")
    for message in view.failed:
        st.error(escape_markdown(message), icon=":material/error:")
    result = view.shuffle
    if result is not None:
        plotly_chart(figures.shuffle, width="stretch", key="shuffle_outputs")
        largest = result.max_abs_difference
        st.markdown(
            f"Shuffled input: `{' '.join(result.shuffled_tokens)}`. The encoder of `reverse-{result.encoding}-h4-l2` "
            f"(float64) gives each token an output vector of {result.before.shape[1]} numbers. **Largest difference "
            f"between a token's output before and after the shuffle: {largest:.1e}**"
            + (" — zero up to rounding: every row just moved with its token." if largest < 1e-9 else
               " — the outputs changed, because the encoder knows where each token stands."))
    st.markdown(text("shuffle"))
    measured_box(view.box)
    st.subheader("4 · Reversing letters with and without position")
    table_col, story_col = st.columns([3, 2], gap="large")
    with table_col:
        st.markdown(f"Input `{' '.join(view.tokens)}` → expected `{' '.join(reversed(view.tokens))} </s>`")
        st.dataframe(figures.summary, hide_index=True, column_config={
            "held-out accuracy": st.column_config.ProgressColumn(
                format="percent", min_value=0.0, max_value=1.0, width=110,  # the table fits the desk's column
                help="Whole sequences right on 1000 held-out inputs (from the model card)."),
            "shuffle difference": st.column_config.NumberColumn(
                format="%.1e", help="Largest change of any token's encoder output under the shuffle above."),
        })
    with story_col:
        runs = view.runs
        if "none" in runs and "sinusoidal" in runs:
            story = {f"{name}_{what}": value for name in ("none", "sinusoidal") for what, value in (
                ("answer", " ".join(runs[name].answer)), ("verdict", RIGHT if runs[name].correct else WRONG),
                ("accuracy", runs[name].heldout_accuracy))}
            st.markdown(text("reversal: none against sinusoidal", n_models=len(runs), **story))
        t5 = claimed(POSITION_MODELS, "t5_learns", shown)
        st.markdown(text("reversal: the other encodings") + (f"\n\n{t5}" if t5 else ""))
    st.markdown("**The same input through each model: attention side by side.**")


def attention(shown) -> None:
    """4 · The attention chosen above, of every model."""
    if shown.figures.attention is not None:
        plotly_chart(shown.figures.attention, width="stretch", key="attention_by_encoding")
        along, off = facts.anti_diagonal(shown.view)
        st.caption(" ".join([text("attention by encoding")]
                            + [text(f"attention by encoding: {name}", models=listed(models))
                               for name, models in (("along", along), ("off", off)) if models]))


def relative(shown) -> None:
    """5 · The chosen scheme's figures (its controls, in one row above them, take the first screen
    with the figure when a lesson step is about it), then what relative schemes are."""
    view, figures, settings = shown.view, shown.figures, shown.settings
    relative_scheme(view, figures, settings)
    st.markdown(text("relative schemes"))


def relative_scheme(view, figures, settings) -> None:
    if settings.scheme == "T5" and view.t5_max_distance != settings.t5_max_distance:
        st.info(f"**Max distance**: with {settings.t5_buckets} buckets the first {view.t5_exact} offsets each get "
                f"their own bucket, so the maximum distance must be larger; {view.t5_max_distance} is used instead "
                f"of {settings.t5_max_distance}.", icon=":material/info:")
    if figures.right is None:  # ALiBi: the heads' biases side by side
        plotly_chart(figures.left, width="stretch", key="alibi_bias")
        st.markdown(text("ALiBi", **facts.alibi_text_facts()))
        return
    name = {"RoPE": ("rope_angles", "rope_scores"), "T5": ("t5_buckets_matrix", "t5_steps")}[settings.scheme]
    left, right = st.columns(2, gap="large")
    plotly_chart(figures.left, where=left, key=name[0])
    altair_chart(figures.right, where=right, key=name[1])
    if settings.scheme == "RoPE":
        accuracy = ("" if view.rope_accuracy is None else
                    f" The shipped RoPE model reverses {view.rope_accuracy:.0%} of held-out inputs.")
        st.markdown(text("RoPE", first_query=view.rope_queries[0], second_query=view.rope_queries[1],
                         rope_dim=settings.rope_dim, rope_accuracy=accuracy))
    else:
        st.markdown(text("T5", farther="farther ones share buckets that widen logarithmically" if facts.t5_shares(view)
                         else "here the maximum distance is so short that the farther ones get a bucket each too"))


serve_lesson(
    POSITIONS,
    lead="Attention compares every token with every other token, and that comparison has no notion of "
    "*where* the tokens are: hand it the same words in another order and it sees the same set. "
    "A positional encoding gives each position its own vector (or changes the scores by how far "
    "apart two tokens are), so that order reaches the model. This page shows the matrices, what "
    "their geometry encodes, and what goes wrong without them.",
    sidebar="Encoding matrix",
    presets=lambda settings: [
        Preset(Button("Lecture table: “I am a robot”", "preset_lecture", "d = 4, base 100, positions 0–3",
                      ":material/school:"), LECTURE),
        Preset(Button("Classic picture: 100 × 512", "preset_classic", "100 positions, 512 dimensions, base 10000",
                      ":material/image:"), CLASSIC)],
    sections=[
        Section("matrix", matrix),
        Section("geometry", geometry),
        Section("models", (shuffle, attention), part=POSITION_MODELS, rows=(3, 3),
                title="3 · Without position, attention cannot see order"),
        Section("relative", relative, part=POSITION_RELATIVE, columns=5,
                title="5 · Relative schemes: position inside the attention score"),
    ],
)
