"""Section 5 of the positional-encodings page (app_pages/positions.py), which calls it; not a page of
its own.  The relative schemes, which leave the input alone and act on each attention score: RoPE's
rotations, ALiBi's distance penalty, T5's buckets."""

import functools

import numpy as np
import pandas as pd
import streamlit as st

from explorer.figures.common import SEQUENTIAL
from explorer.figures.positions import line_chart, matrix_heatmap, panel_grid
from explorer.model.positional import alibi_slopes, t5_relative_buckets
from explorer.ui import UrlControls, altair_chart, lesson_text, plotly_chart
from explorer.views.positions import MAX_POSITIONS, ReversalRun, draw_plan
from explorer.views.relative import (
    alibi_causal_bias,
    rope_offset_scores,
    rope_rotation_degrees,
    rope_vectors,
    t5_exact_buckets,
    t5_offset_buckets,
)

ROPE_DIMS = [2, 4, 8, 16, 32, 64, 128]
ROPE_VECTORS = {"all ones": "ones", "random": "random"}
T5_BUCKETS = [8, 16, 32, 64]
T5_DISTANCES = [8, 16, 32, 64, 128, 256]
SCHEMES = {"RoPE": "rotate q and k by their positions", "ALiBi": "a distance penalty per head",
           "T5": "a learned bias per distance bucket"}
text = functools.partial(lesson_text, "positions")


def slope_text(slope: float) -> str:
    inverse = 1.0 / slope
    return f"1/{inverse:.0f}" if abs(inverse - round(inverse)) < 1e-9 else f"{slope:.4g}"


@st.fragment
def relative_section(controls: UrlControls, runs: dict[str, ReversalRun], bases: list[int]) -> None:
    """Section 5, a fragment: its controls (all beside it) rerun and resend this section only."""
    st.divider()
    st.subheader("5 · Relative schemes: position inside the attention score")
    st.markdown(text("relative schemes"))
    scheme = controls.radio("Relative scheme", list(SCHEMES), 0, "scheme", horizontal=True,
                            help=" · ".join(f"{name}: {what}" for name, what in SCHEMES.items()))
    st.markdown(f"#### {scheme}: {SCHEMES[scheme]}")
    if scheme == "RoPE":
        rope_section(controls, runs.get("rope"), bases)
    elif scheme == "ALiBi":
        alibi_section(controls)
    else:
        t5_section(controls)


def rope_section(controls: UrlControls, rope_run: ReversalRun | None, bases: list[int]) -> None:
    a, b, c, d = st.columns(4)
    rope_dim = controls.select_slider("Head dimension", ROPE_DIMS, 16, "rope_dim", where=a,
                                      help="The shipped models have 64 / 4 heads = 16.")
    rope_positions = controls.slider("Positions", 2, MAX_POSITIONS, 64, 1, "rope_positions", where=b)
    rope_base = controls.select_slider("Base", bases, 10000, "rope_base", where=c)
    vectors = ROPE_VECTORS[controls.radio("q and k", list(ROPE_VECTORS), 0, "rope_vectors", where=d,
                                          horizontal=True, help="random: fixed normal vectors (seed 0)")]
    angle_col, score_col = st.columns(2, gap="large")
    degrees = rope_rotation_degrees(rope_positions, rope_dim, float(rope_base))
    plan = draw_plan(*degrees.shape)
    plotly_chart(
        matrix_heatmap(degrees[np.ix_(plan.rows, plan.cols)], row_values=plan.rows, col_values=plan.cols,
                       x_title="dimension pair", y_title="position", value_name="angle (°)",
                       title="Rotation of each pair, modulo 360°", zmin=-180.0, zmax=180.0, number_format=".0f",
                       height=460),
        where=angle_col, key="rope_angles",
    )
    offsets = np.arange(-(rope_positions - 1), rope_positions)
    query_positions = [rope_positions - 1, 2 * (rope_positions - 1)]
    scores = rope_offset_scores(*rope_vectors(rope_dim, vectors), query_positions, offsets, float(rope_base))
    score_frame = pd.concat([pd.DataFrame({"offset (key − query)": offsets, "score q·k": row,
                                           "query at": f"position {m}"})
                             for m, row in zip(query_positions, scores, strict=True)])
    with score_col:
        altair_chart(line_chart, score_frame, x="offset (key − query)", y="score q·k", color="query at",
                     title="Score of the same q and k at every offset", height=460, key="rope_scores")
    accuracy = ("" if rope_run is None or rope_run.heldout_accuracy is None else
                f" The shipped RoPE model reverses {rope_run.heldout_accuracy:.0%} of held-out inputs.")
    st.markdown(text("RoPE", first_query=query_positions[0], second_query=query_positions[1], rope_dim=rope_dim,
                     rope_accuracy=accuracy))


def alibi_section(controls: UrlControls) -> None:
    a, b, _ = st.columns([1, 1, 2])
    heads = controls.slider("Heads", 1, 16, 4, 1, "alibi_heads", where=a, help="The shipped ALiBi model has 4 heads.")
    length = controls.slider("Sequence length", 2, 32, 8, 1, "alibi_length", where=b)
    columns = 4 if heads >= 4 else heads
    plotly_chart(
        panel_grid(list(alibi_causal_bias(heads, length)),
                   titles=[f"head {h + 1} · slope {slope_text(s)}" for h, s in enumerate(alibi_slopes(heads))],
                   x_title="key position", y_title="query position", value_name="bias", columns=columns,
                   panel_height=max(220, 1200 // columns - 60), number_format=".3f", label_size=13),
        width="stretch", key="alibi_bias",
    )
    st.markdown(text("ALiBi"))


def t5_section(controls: UrlControls) -> None:
    a, b, c, d = st.columns(4)
    length = controls.slider("Sequence length", 2, 256, 48, 1, "t5_length", where=a)
    n_buckets = controls.select_slider("Buckets", T5_BUCKETS, 32, "t5_buckets", where=b)
    max_distance = controls.select_slider("Max distance", T5_DISTANCES, 128, "t5_max_distance", where=c,
                                          help="Offsets at least this far share the last bucket.")
    bidirectional = controls.toggle("Both directions", True, "t5_bidirectional", where=d,
                                    help="Encoders look both ways (half the buckets for keys after the query); "
                                         "a causal decoder only back.")
    exact = t5_exact_buckets(n_buckets, bidirectional)
    if max_distance <= exact:
        usable = next(d for d in T5_DISTANCES if d > exact)
        # Beside the control, not in the page's note at the top: this section reruns on its own.
        st.info(f"**Max distance**: with {n_buckets} buckets the first {exact} offsets each get their own "
                f"bucket, so the maximum distance must be larger; {usable} is used instead of {max_distance}.",
                icon=":material/info:")
        max_distance = usable
    bucket_col, step_col = st.columns(2, gap="large")
    plotly_chart(
        matrix_heatmap(t5_relative_buckets(length, None, bidirectional, n_buckets, max_distance),
                       x_title="key position", y_title="query position", value_name="bucket",
                       title="Bucket of each (query, key) pair", scale=SEQUENTIAL, zmin=0, zmax=n_buckets - 1,
                       number_format=".0f", height=460),
        where=bucket_col, key="t5_buckets_matrix",
    )
    offsets, buckets = t5_offset_buckets(length - 1, bidirectional, n_buckets, max_distance)
    with step_col:
        altair_chart(line_chart, pd.DataFrame({"offset (key − query)": offsets, "bucket": buckets}),
                     x="offset (key − query)", y="bucket", step=True, number_format=".0f",
                     title="Bucket against offset", height=460, key="t5_steps")
    st.markdown(text("T5"))
