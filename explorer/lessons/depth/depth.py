"""Lesson: depth — why every transformer sublayer is wrapped in a residual "Add & Norm"."""

import streamlit as st

from explorer.figures.common import frame_csv
from explorer.kit.draw import (
    Section,
    altair_chart,
    claimed,
    counted,
    download_csv,
    lesson_text,
    measured_box,
    plotly_chart,
)
from explorer.lessons.depth.spec import DEPTH
from explorer.lessons.depth.view import addnorm_boxes
from explorer.serve.adapter import serve_lesson


def gradient_by_layer(shown) -> None:
    st.subheader("Gradient reaching each layer")
    lines_col, bars_col = st.columns([1, 1], gap="medium")
    altair_chart(shown.figures.chart, where=lines_col, key="depth_chart")
    # the numbers the steps quote, on a linear scale (the lines span up to 27 powers of ten)
    altair_chart(shown.figures.orders, where=bars_col, key="depth_orders")


def details(shown) -> None:
    """Under the key figure: the same numbers as colour, the table and the four wirings explained."""
    st.caption("The same numbers as colour, one row per wiring:")
    plotly_chart(shown.figures.heatmap, key="depth_map")
    download_csv(f"depth_gradients_L{shown.settings.n_layers}.csv", "Download the curves (CSV)", frame_csv,
                 shown.figures.frame, key="depth_csv")

    table_col, text_col = st.columns([1, 1], gap="large")
    with table_col:
        st.markdown("**From the last layer down to layer 0**: log10 ‖∂L/∂h‖ at each end, and the orders of "
                    "magnitude lost on the way down.")
        st.dataframe(shown.figures.table, hide_index=True, column_config={
            "configuration": st.column_config.TextColumn(width="medium"),
            **{name: st.column_config.NumberColumn(format="%.1f", width="small")
               for name in ("last layer", "layer 0", "orders lost")},
        })
    with text_col:
        st.markdown(
            r"""
    **The four ways to wrap a sublayer F** (attention or feed-forward), as drawn:

    | | with residual | without residual |
    |---|---|---|
    | post-norm (the original paper) | h ← LN(h + F(h)) | h ← LN(F(h)) |
    | pre-norm (most recent models) | h ← h + F(LN(h)) | h ← F(LN(h)) |
    | no LayerNorm | h ← h + F(h) | h ← F(h) |

    **Why the short cut helps.** The Jacobian of h + F(h) is I + ∂F/∂h. Multiplied over the layers, the
    product holds a term that passes through no sublayer at all: part of the gradient from the top
    reaches the bottom directly, however small ∂F/∂h is (He et al., 2016, "Identity Mappings in Deep
    Residual Networks", §3). Without the short cut only the product of the ∂F/∂h is left — the same
    kind of product of Jacobians that makes an RNN forget, with layers in place of time steps. In
    post-norm, the LayerNorm after each add multiplies that direct path by its own Jacobian.
    """
        )

    for name in ("notice_shallow", "notice_bare", "notice_norm"):
        text = claimed(DEPTH, name, shown)
        if text:
            st.markdown(text)
    st.markdown(lesson_text("depth", "wiring"))
    st.markdown(lesson_text("depth", "addnorm"))
    for box in addnorm_boxes(shown.settings.width, shown.settings.T):
        measured_box(box)
    st.markdown(lesson_text("depth", "degradation"))


serve_lesson(
    DEPTH,
    lead="A deep stack has the same weakness as a long loop: the gradient that reaches the first layer is "
    "a product of one Jacobian per layer above it. Transformers stack many layers anyway, because every "
    "sublayer (attention, feed-forward) is wrapped in **Add & Norm**: its input is *added* back to its "
    "output — a short cut the gradient can take — and a LayerNorm rescales each token's vector. Here a "
    "stack of encoder layers is built with and without those pieces, and we measure the gradient that "
    "arrives at each layer.",
    sidebar="Stack",
    sections=[Section("gradient", gradient_by_layer), Section("details", details)],
    working=lambda s: f"Building 6 stacks of {s.n_layers} layers × {counted(s.n_seeds, 'seed')} and back-propagating…",
)
