"""Lesson: positional encodings — the matrices, their geometry, and why attention needs them.

Five sections, each a function, run in order at the end: 1 and 2 (the matrices and their geometry)
are below, 3 and 4 (the shipped models) in positions_models.py, 5 (relative schemes) in
positions_relative.py.  The lesson's prose is in lessons/positions.md."""

import functools

import numpy as np
import pandas as pd
import streamlit as st

from app_pages.positions_models import reversal_section, shuffle_section
from app_pages.positions_relative import relative_section
from explorer.figures.common import matrix_csv
from explorer.figures.positions import line_chart, matrix_heatmap
from explorer.serve.later import below_the_fold
from explorer.serve.page import lesson_page, next_lesson
from explorer.ui import altair_chart, lesson_text, plotly_chart
from explorer.views.positions import (
    LEARNED_MODEL,
    LECTURE_WORDS,
    MATRIX_KINDS,
    MAX_DIMS,
    MAX_POSITIONS,
    MatrixView,
    PretrainedModelError,
    colour_bound,
    column_names,
    matrix_view,
)

BASES = [10, 30, 100, 300, 1000, 3000, 10000, 30000, 100000]
LECTURE = {"kind": "sinusoidal", "positions": 4, "d_model": 4, "base": 100}
CLASSIC = {"kind": "sinusoidal", "positions": 100, "d_model": 512, "base": 10000}
MEASURES = {"dot product": "dot", "cosine": "cosine"}
# Controls of sections 3–5, made beside them (not while a lesson step hides the figures).
LATER_KEYS = ("shuffle_input", "shuffle_text", "shuffle_encoding", "seed", "att_block", "att_layer", "att_head",
              "scheme", "rope_dim", "rope_positions", "rope_base", "rope_vectors", "alibi_heads", "alibi_length",
              "t5_length", "t5_buckets", "t5_max_distance", "t5_bidirectional")
text = functools.partial(lesson_text, "positions")  # text("section name", field=value, …)


def preset(settings: dict) -> None:
    """Button callback: move the matrix controls to a preset."""
    st.session_state.update(settings)


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def number(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def matrix_controls(side) -> tuple[str, int, int, int, str]:
    """The sidebar: encoding, sizes, base, the two presets and the similarity measure."""
    side.header("Encoding matrix")
    kind = controls.radio("Encoding", MATRIX_KINDS, 0, "kind", where=side, horizontal=True,
                          help="learned: the table the shipped model "
                               f"`{LEARNED_MODEL}` learned; MiniLM: the table of a real model, "
                               "all-MiniLM-L6-v2 (512 × 384). Their sizes are fixed.")
    fixed = kind in ("learned", "MiniLM")
    n_positions = controls.slider("Positions", 1, MAX_POSITIONS, LECTURE["positions"], 1, "positions", where=side,
                                  disabled=fixed, help="Rows of the matrix: positions 0 … n − 1.")
    d_model = controls.slider("Dimensions (d_model)", 1, MAX_DIMS, LECTURE["d_model"], 1, "d_model", where=side,
                              disabled=fixed, help="Columns of the matrix.")
    base = controls.select_slider("Base", BASES, LECTURE["base"], "base", where=side, disabled=kind != "sinusoidal",
                                  help="Sinusoidal only: dimension pair i turns at frequency 1 / base^(2i/d). "
                                       "The paper uses 10000; the lecture's small table uses 100.")
    side.button("Lecture table: “I am a robot”", on_click=preset, args=(LECTURE,), icon=":material/school:",
                help="d = 4, base 100, positions 0–3")
    side.button("Classic picture: 100 × 512", on_click=preset, args=(CLASSIC,), icon=":material/image:",
                help="100 positions, 512 dimensions, base 10000")
    measure_label = controls.radio("Similarity", list(MEASURES), 0, "similarity", where=side, horizontal=True,
                                   help="How two positions' vectors are compared in section 2.")
    return kind, n_positions, d_model, base, measure_label


# --- 1 · the matrix ---------------------------------------------------------------------------------------


def matrix_section(view: MatrixView, kind: str, row_labels: list[str] | None, lecture_table: bool) -> None:
    n_rows, n_cols = view.shape
    plan, drawn = view.plan, view.drawn
    st.subheader("1 · The encoding matrix: one row per position")
    if view.table is None and n_cols > 32:  # a wide matrix gets the full width, the text goes below it
        matrix_col = st.container()
        formula_col, text_col = st.columns(2, gap="large") if kind == "sinusoidal" else (st.container(),) * 2
    else:
        matrix_col, text_col = st.columns([3, 2], gap="large")
        formula_col = matrix_col
    with matrix_col:
        bound = colour_bound(kind)
        plotly_chart(
            matrix_heatmap(drawn, row_values=plan.rows, col_values=plan.cols, row_labels=row_labels,
                           x_title="dimension", y_title="position", value_name="PE value",
                           title=f"{kind}: {n_rows} positions × {n_cols} dimensions",
                           zmin=-bound if bound else None, zmax=bound, number_format=".3f",
                           height=None if n_rows <= 24 else 620),
            width="stretch", key="matrix",
        )
        if plan.downsampled:
            st.caption(
                f":material/photo_size_select_small: **Downsampled for drawing:** every {ordinal(plan.row_step)} "
                f"position and every {ordinal(plan.col_step)} dimension — {plan.shape[0]} × {plan.shape[1]} of "
                f"the {n_rows} × {n_cols} cells. Hover shows the true position and dimension."
            )
        col_names = column_names(n_cols, view.base)
        what = "full matrix" if not plan.downsampled else f"drawn sample ({plan.shape[0]} × {plan.shape[1]} cells)"
        csv_rows, csv_cols = row_labels or [str(p) for p in plan.rows], [col_names[j] for j in plan.cols]
        # Up to 65 536 cells, ~1 MB of text: built only when the button is clicked (deferred data).
        st.download_button(f"Download the {what} (CSV)", icon=":material/download:", mime="text/csv",
                           file_name=f"positional_{kind}_{n_rows}x{n_cols}.csv", on_click="ignore",
                           data=lambda: matrix_csv(np.round(drawn, 8), csv_rows, csv_cols, corner="position").encode())
    if kind == "sinusoidal":
        formula_col.markdown(text("matrix: sinusoidal formula"))
    with text_col:
        if view.table is not None:
            st.dataframe(
                pd.DataFrame(np.round(view.table, 2), index=row_labels or [str(p) for p in range(n_rows)],
                             columns=col_names),
                column_config={name: st.column_config.NumberColumn(format="%.2f") for name in col_names},
            )
            st.caption("The same numbers, rounded to two decimals. Column headers give the function of p.")
        if kind == "sinusoidal":
            st.markdown(text("matrix: why sines and cosines"))
            if lecture_table:
                st.markdown(text("matrix: lecture table"))
        else:
            st.markdown(text(f"matrix: {kind}", n_rows=n_rows, n_cols=n_cols, model=LEARNED_MODEL))
        scaled = "are added unscaled (as in BERT)" if kind == "MiniLM" else "are multiplied by √d"
        st.caption(f"Source: {view.source}. Token embeddings {scaled} before the position is added.")


# --- 2 · geometry ----------------------------------------------------------------------------------------


def geometry_section(view: MatrixView, kind: str, measure_label: str, sim_labels: list[str] | None) -> None:
    st.divider()
    st.subheader("2 · Geometry: what comparing two positions reveals")
    n_rows, measure = view.shape[0], MEASURES[measure_label]
    sim_rows, sim, share = view.sim_rows, view.similarity, view.offset_share
    sim_col, offset_col = st.columns(2, gap="large")
    with sim_col:
        plotly_chart(
            matrix_heatmap(sim, row_values=sim_rows, col_values=sim_rows, row_labels=sim_labels,
                           col_labels=sim_labels, x_title="position", y_title="position", value_name=measure_label,
                           title=f"PE·PEᵀ ({measure_label})", zmin=-1.0 if measure == "cosine" else None,
                           zmax=1.0 if measure == "cosine" else None, annotate=len(sim_rows) <= 8,
                           number_format=".2f", height=520 if len(sim_rows) > 8 else None),
            width="stretch", key="similarity_matrix",
        )
        if len(sim_rows) < n_rows:
            st.caption(f":material/photo_size_select_small: Drawn for every {ordinal(int(sim_rows[1]))} position "
                       f"({len(sim_rows)} × {len(sim_rows)} of {n_rows} × {n_rows}).")
    with offset_col:
        frame = pd.concat([pd.DataFrame({"offset k": np.arange(len(v)), measure_label: v,
                                         "from position": f"p = {p}"}) for p, v in view.curves.items()])
        if n_rows > 1:
            altair_chart(line_chart, frame, x="offset k", y=measure_label, color="from position",
                         title="Similarity of position p with p + k", height=420, key="offset_curves")
        if share is None:
            verdict = ("every pair of positions compares the same, so the similarity carries no position at all"
                       if kind not in ("learned", "MiniLM") else "the similarity is constant")
            st.markdown(f"**The offset explains:** nothing to explain — {verdict}.")
        else:
            st.markdown(f"**The offset between two positions explains {share:.1%} of this matrix's variation** "
                        "(share of the variance left after replacing every diagonal by its mean).")
    st.markdown(text(f"geometry: {kind}"))
    if kind == "sinusoidal":
        wavelength_section(view.wavelengths, n_rows)


def wavelength_section(waves: np.ndarray, n_rows: int) -> None:
    wave_col, wave_text = st.columns([3, 2], gap="large")
    pairs = np.arange(len(waves))
    wave_frame = pd.concat([
        pd.DataFrame({"dimension pair i": pairs, "wavelength (positions)": waves, "line": "wavelength of pair i"}),
        pd.DataFrame({"dimension pair i": pairs[[0, -1]], "wavelength (positions)": float(n_rows),
                      "line": f"{n_rows} positions shown"}),
    ])
    with wave_col:
        altair_chart(line_chart, wave_frame, x="dimension pair i", y="wavelength (positions)", color="line",
                     log_y=True, title="Wavelength of each sin/cos pair (log scale)", height=400,
                     key="wavelengths")
    wave_text.markdown(text("wavelengths", first=waves[0], last=number(waves[-1]), beyond=int(np.sum(waves > n_rows)),
                            pairs=len(waves), n_rows=n_rows))


def model_sections(controls) -> None:
    """Sections 3–5: word order without positions, the shipped models, the relative schemes."""
    tokens, seed = shuffle_section(controls)
    runs = reversal_section(controls, tokens, seed)
    relative_section(controls, runs, BASES)


# --- the page ---------------------------------------------------------------------------------------------

controls, lesson = lesson_page(
    "positions",
    "Positional encodings",
    "Attention compares every token with every other token, and that comparison has no notion of "
    "*where* the tokens are: hand it the same words in another order and it sees the same set. "
    "A positional encoding gives each position its own vector (or changes the scores by how far "
    "apart two tokens are), so that order reaches the model. This page shows the matrices, what "
    "their geometry encodes, and what goes wrong without them.",
)
notes = st.container()
kind, n_positions, d_model, base, measure_label = matrix_controls(st.sidebar)
if not lesson.revealed:  # a lesson step asks its question first
    with notes:
        controls.report(later=LATER_KEYS)
    st.stop()
try:
    view = matrix_view(kind, n_positions, d_model, float(base), MEASURES[measure_label])
except PretrainedModelError as problem:  # the learned table lives in a shipped model's weights
    st.error(f"{problem}\n\nShowing the sinusoidal matrix instead.", icon=":material/error:")
    kind = "sinusoidal"
    view = matrix_view(kind, n_positions, d_model, float(base), MEASURES[measure_label])
lecture_rows = kind not in ("learned", "MiniLM") and view.shape[0] == len(LECTURE_WORDS)
row_labels = [f"{p} · {w}" for p, w in enumerate(LECTURE_WORDS)] if lecture_rows else None
matrix_section(view, kind, row_labels, lecture_table=lecture_rows and d_model == 4 and base == 100)
lesson.explain()
below_the_fold(geometry_section, view, kind, measure_label, row_labels)
below_the_fold(model_sections, controls, controls=controls, keys=LATER_KEYS)
with notes:
    controls.report()
next_lesson("positions")
