"""Lesson: attention as a soft dictionary lookup."""

import streamlit as st

from explorer.analysis.lookup import EXAMPLE_QUERY
from explorer.figures.common import matrix_csv
from explorer.kit.draw import Button, Preset, Section, download_csv, measured_box, plotly_chart, preset_buttons
from explorer.lessons.lookup.spec import LOOKUP
from explorer.lessons.lookup.view import NOTHING, LookupSettings, listed, lookup_facts, number, read_dictionary
from explorer.serve.adapter import serve_lesson


def _query(vector) -> dict[str, float]:
    return {f"q{i + 1}": float(x) for i, x in enumerate(vector)}


def query_bar(settings) -> None:
    """The query, the sharpness and the buttons the lesson's steps use, on the page above the bars: a
    presenter's sidebar is folded, and the class should see q and the button that copies a key into it
    (the sliders stay in the sidebar)."""
    bar = st.container(horizontal=True, vertical_alignment="center", gap="small", key="query_bar")
    scaled = " · scores ÷ √d" if settings.scale else ""
    # One row at 1280 px presenting (with a longer label and an icon the last k button wrapped onto a second)
    bar.markdown(f"**q** = [{', '.join(number(x) for x in settings.query)}] · temperature "
                 f"{settings.temperature:g}{scaled}", width="content")
    preset_buttons([Preset(Button("Lecture query", "lecture_query", help="Set q to the lecture's example query"),
                           _query(EXAMPLE_QUERY))], LookupSettings, settings, bar)
    bar.markdown("Set q to key:", width="content")
    preset_buttons([Preset(Button(f"k{j + 1}", f"copy_k{j + 1}", help=f"Set the query to key k{j + 1}"), _query(key))
                    for j, key in enumerate(read_dictionary(settings).keys)], LookupSettings, settings, bar)


def lookup(shown) -> None:
    """The key figure: the scores, the weights and the mixed answer."""
    view, figures, facts = shown.view, shown.figures, lookup_facts(shown.view)
    result, labels = view.result, view.key_labels
    st.subheader("1 · Score every key, 2 · softmax, 3 · mix the values")
    query_bar(shown.settings)
    chart_left, chart_right = st.columns(2)
    # On a phone each takes the screen's width: its five bars and their values fit there, and the keys an
    # answer names stay in sight (at the 600 px of a wide chart the scores' bars scrolled out of view).
    plotly_chart(figures.scores, where=chart_left, key="scores", phone_fits=True)
    plotly_chart(figures.weights, where=chart_right, key="weights", phone_fits=True)
    st.markdown(f"**Output** = {facts['mix']} = **{facts['output']}**")
    if result.scale != 1.0:
        divided = f"1/√{facts['d']}" if shown.settings.scale else "1"
        st.caption(f"Before the softmax every score is multiplied by {result.scale:.3g} "
                   f"(= {divided} ÷ temperature {shown.settings.temperature:g}).")
    nothing = [labels[j] for j, w in enumerate(result.weights) if w < NOTHING]
    mixed = [f"v{j + 1}" for j, w in enumerate(result.weights) if w >= NOTHING]
    left_out = (f" {listed(nothing)} {'scores' if len(nothing) == 1 else 'score'} so far below the best that "
                f"{'it receives' if len(nothing) == 1 else 'they receive'} next to nothing (under {NOTHING})."
                if nothing else "")
    blend = (f"the answer is {mixed[0]} alone, as a dictionary would give it" if len(mixed) == 1
             else f"the answer is a blend of {listed(mixed)}")
    share = ("Every key gets a share of the weight" if not nothing and len(mixed) > 1
             else "Only keys that score about as well as the best share the weight")
    st.markdown(
        f"""
**What to notice.** Here the scores {facts['scores']} become the weights
{listed([f"{w:.2f}" for w in result.weights])}.{left_out} {share}: {blend}.

**Try next.** The *k* buttons above the bars copy a key into the query. When that key's score beats all the others by
a wide margin, it takes nearly all the weight and the lookup returns (almost exactly) its value — the
dictionary behaviour, recovered. Raise the temperature and the weights flatten towards an even split of
{facts['even']:.2f} each; lower it and the weight gathers on the best-scoring key (shared by keys that tie for
the best). Switching on √d scaling divides
these {facts['d']}-dimensional scores by √{facts['d']} = {facts['sqrt_d']:g}.
"""
    )


def key_table(shown) -> None:
    """Every key's score and weight as a table, under the bar charts."""
    st.dataframe(shown.figures.table, column_config={
        "score q·k": st.column_config.NumberColumn(format="%.2f"),
        "softmax input": st.column_config.NumberColumn(format="%.2f", help="score × scale ÷ temperature"),
        "weight": st.column_config.ProgressColumn(format="%.2f", min_value=0.0, max_value=1.0),
    })


def weight_matrix(shown) -> None:
    """Every key used as a query too: the lookup as a matrix."""
    view = shown.view
    n = len(view.key_labels)
    st.divider()
    st.subheader("Many queries at once: a weight matrix")
    matrix_left, matrix_right = st.columns([3, 2], gap="large")
    with matrix_left:
        plotly_chart(shown.figures.matrix, key="stacked_weights")
        download_csv("lookup_weights.csv", "Download the weights (CSV)", matrix_csv, view.stacked.weights,
                     view.query_labels, view.key_labels, corner="query")
    found = view.found_themselves
    themselves = (f"all {n} keys find themselves" if found == n else
                  f"{found} of the {n} keys {'finds itself' if found == 1 else 'find themselves'}")
    with matrix_right:
        st.markdown(
            f"""
    Stack several queries as the rows of a matrix *Q* and the whole lookup becomes two matrix
    products: softmax(*QKᵀ*) gives one row of weights per query, and multiplying by *V* gives one
    answer per query. Every row sums to 1.

    Here the first row is your query and the others use each key as a query. Such a row lights up on
    the diagonal when no other key scores higher against that key than the key itself: always so when
    the keys have equal length (then q·k_j = |q|² is the largest dot product, by Cauchy–Schwarz), not
    always otherwise, however distinct the keys. With these keys, {themselves}. Self-attention
    is exactly this, with the queries, keys and values all computed from the same sequence — one row per token.
    """
        )
    measured_box(view.box)


serve_lesson(
    LOOKUP,
    lead="A Python dictionary answers only when the key matches exactly. Attention is a *soft* version of "
    "that lookup: the query is compared with **every** key (a dot product), the scores become weights "
    "that are positive and add up to one (a softmax), and the answer is the **weighted mix of the "
    "values**. A key whose score beats every other by a wide margin takes almost all of the weight; keys "
    "that score about equally share it.",
    sidebar="Query",
    sections=[Section("lookup", lookup), Section("table", key_table), Section("matrix", weight_matrix)],
    notes=lambda settings: read_dictionary(settings).notes,
)
