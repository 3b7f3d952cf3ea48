"""Lesson: attention as a soft dictionary lookup."""

import numpy as np
import pandas as pd
import streamlit as st

from explorer.analysis.lookup import (
    EXAMPLE_KEYS,
    EXAMPLE_QUERY,
    EXAMPLE_VALUES,
    MAX_TEXT_LENGTH,
    format_vectors,
    parse_vectors,
    soft_lookup,
)
from explorer.figures import common as figures
from explorer.serve.later import below_the_fold
from explorer.serve.page import lesson_page, next_lesson
from explorer.ui import download_csv, escape_markdown, plotly_chart

DIM = EXAMPLE_KEYS.shape[1]
QUERY_KEYS = [f"q{i + 1}" for i in range(DIM)]
SLIDER_LIMIT = 10.0


def set_query(vector) -> None:
    """Button callback: move the query sliders to `vector` (rounded and clipped to their range)."""
    for key, x in zip(QUERY_KEYS, vector, strict=True):
        st.session_state[key] = float(np.clip(round(float(x), 1), -SLIDER_LIMIT, SLIDER_LIMIT))


def lookup_table(keys, values, result, key_labels: list[str]) -> None:
    """Every key's score and weight as a table, under the bar charts."""
    table = pd.DataFrame(
        {
            "key": [", ".join(f"{x:g}" for x in k) for k in keys],
            "value": [", ".join(f"{x:g}" for x in v) for v in values],
            "score q·k": result.scores,
            "softmax input": result.scaled_scores,
            "weight": result.weights,
        },
        index=key_labels,
    )
    if result.scale == 1.0:
        table = table.drop(columns="softmax input")
    st.dataframe(table, column_config={
        "score q·k": st.column_config.NumberColumn(format="%.2f"),
        "softmax input": st.column_config.NumberColumn(format="%.2f", help="score × scale ÷ temperature"),
        "weight": st.column_config.ProgressColumn(format="%.2f", min_value=0.0, max_value=1.0),
    })


def weight_matrix_section(query, keys, values, key_labels: list[str], scale: bool, temperature: float) -> None:
    """Every key used as a query too: the lookup as a matrix (under the key figure)."""
    st.divider()
    st.subheader("Many queries at once: a weight matrix")
    stacked_queries = np.vstack([query[None], keys])
    stacked = soft_lookup(stacked_queries, keys, values, scale_by_sqrt_d=scale, temperature=temperature)
    query_labels = ["your query"] + [f"k{j + 1} as query" for j in range(len(keys))]
    matrix_left, matrix_right = st.columns([3, 2], gap="large")
    with matrix_left:
        plotly_chart(figures.heatmap(stacked.weights, x_labels=key_labels, y_labels=query_labels, x_title="key",
                                     y_title="query", value_name="weight", zmin=0.0, zmax=1.0,
                                     title="Softmax weights, one row per query"), key="stacked_weights")
        download_csv("lookup_weights.csv", "Download the weights (CSV)", figures.matrix_csv, stacked.weights,
                     query_labels, key_labels, corner="query")
    with matrix_right:
        st.markdown(
            """
    Stack several queries as the rows of a matrix *Q* and the whole lookup becomes two matrix
    products: softmax(*QKᵀ*) gives one row of weights per query, and multiplying by *V* gives one
    answer per query. Every row sums to 1.

    Here the first row is your query and the others use each key as a query. When the keys are
    distinct enough, those rows light up on the diagonal: a query that equals a key finds that key.
    Self-attention is exactly this, with the queries, keys and values all computed from the same
    sequence — one row per token.
    """
        )


controls, lesson = lesson_page(
    "lookup",
    "Attention as a lookup",
    "A Python dictionary answers only when the key matches exactly. Attention is a *soft* version of "
    "that lookup: the query is compared with **every** key (a dot product), the scores become weights "
    "that are positive and add up to one (a softmax), and the answer is the **weighted mix of the "
    "values**. A close match takes almost all of the weight; keys that match about equally share it.",
)
left, right = st.columns([1, 2], gap="large")

with left:
    st.subheader("Query")
    query = np.array(
        [controls.slider(f"q{i + 1}", -SLIDER_LIMIT, SLIDER_LIMIT, float(EXAMPLE_QUERY[i]), 0.1, QUERY_KEYS[i])
         for i in range(DIM)]
    )
    st.subheader("Dictionary")
    keys_text = controls.text_area(
        f"Keys: one row per key, {DIM} numbers each", format_vectors(EXAMPLE_KEYS), "keys",
        MAX_TEXT_LENGTH, help="Separate numbers with commas or spaces and rows with ';' or new lines. "
        "Up to 8 keys, numbers within ±100.", height=170,
    )
    values_text = controls.text_area(
        "Values: one row per key", format_vectors(EXAMPLE_VALUES), "values", MAX_TEXT_LENGTH,
        help="Any length up to 8 numbers, the same for every row.", height=170,
    )
    st.subheader("Sharpness")
    scale = controls.toggle("Divide scores by √d", False, "scale",
                            help="The transformer divides by √d so scores do not grow with the vector length.")
    temperature = controls.slider("Temperature", 0.1, 10.0, 1.0, 0.1, "temperature",
                                  help="Scores are divided by the temperature before the softmax.")

try:
    keys = parse_vectors(keys_text, dim=DIM)
except ValueError as problem:
    controls.note(f"{escape_markdown(problem)}. Showing the lecture's keys instead.", about="Keys")
    keys = EXAMPLE_KEYS
try:
    values = parse_vectors(values_text, rows=len(keys))
except ValueError as problem:
    values = EXAMPLE_VALUES if len(keys) == len(EXAMPLE_VALUES) else np.eye(len(keys))
    shown = "the lecture" if values is EXAMPLE_VALUES else "one-hot"
    controls.note(f"{escape_markdown(problem)}. Showing {shown} values instead.", about="Values")

with left:
    st.button("Lecture example query", on_click=set_query, args=(EXAMPLE_QUERY,), icon=":material/school:",
              key="lecture_query")
    st.caption("Copy a key into the query:")
    for j, column in enumerate(st.columns(len(keys))):
        column.button(f"k{j + 1}", key=f"copy_k{j + 1}", on_click=set_query, args=(keys[j],),
                      help=f"Set the query to key k{j + 1}")

controls.report()
if not lesson.revealed:
    st.stop()

result = soft_lookup(query, keys, values, scale_by_sqrt_d=scale, temperature=temperature)
key_labels = [f"k{j + 1}" for j in range(len(keys))]

with right:
    st.subheader("1 · Score every key, 2 · softmax, 3 · mix the values")
    chart_left, chart_right = st.columns(2)
    plotly_chart(figures.bar_chart(key_labels, result.scores, title="Scores q·k", value_title="score"),
                 where=chart_left, key="scores")
    plotly_chart(figures.bar_chart(key_labels, result.weights, title="Weights after softmax", value_title="weight",
                                   domain=(0.0, 1.15), color="#21918c"), where=chart_right, key="weights")
    lesson.explain()
    below_the_fold(lookup_table, keys, values, result, key_labels)
    terms = [f"{w:.2f}·v{j + 1}" for j, w in enumerate(result.weights) if w >= 0.005]
    st.markdown("**Output** = " + " + ".join(terms) + " = **[" + ", ".join(f"{x:.2f}" for x in result.output) + "]**")
    if result.scale != 1.0:
        st.caption(f"Before the softmax every score is multiplied by {result.scale:.3g} "
                   f"(= {'1/√' + str(DIM) if scale else '1'} ÷ temperature {temperature:g}).")

    st.markdown(
        """
**What to notice.** The lecture's example opens the page: scores 2.0, 2.4, −10, 1.8 and −12.5 give
weights of about .30, .45, 0, .25 and 0. The two keys that score far below the others receive
nothing at all, and the answer is a blend of the three values whose keys scored about the same.

**Try next.** The *k3* button copies a key into the query: its score beats all the others by a wide
margin, so that key takes nearly all the weight and the lookup returns (almost exactly) its value —
the dictionary behaviour, recovered. Raise the temperature and the weights flatten towards an even
1/n split; lower it and the single best key wins outright. Switching on √d scaling divides these
4-dimensional scores by 2, which softens the weights a little.
"""
    )

below_the_fold(weight_matrix_section, query, keys, values, key_labels, scale, temperature)

next_lesson("lookup")
