"""Sections 3 and 4 of the positional-encodings page (app_pages/positions.py), which calls them; not
a page of its own.  Why attention needs position, shown with the shipped reversal models: an encoder
without positions cannot tell a shuffled input from the original, and only the models with usable
positions learn to reverse."""

import functools

import numpy as np
import pandas as pd
import streamlit as st

from explorer.figures.common import SEQUENTIAL
from explorer.figures.positions import panel_grid
from explorer.training.tasks import get_task
from explorer.ui import UrlControls, lesson_text, plotly_chart, sequence_input
from explorer.views.positions import SHIPPED_ENCODINGS, PretrainedModelError, ReversalRun, reversal_run, shuffle_demo

INPUTS = ["A B C D E F G", "H E L L O", "J A B B E D C O D E", "B A N A N A"]
SEED_LIMIT = 9999
BLOCKS = {"cross": 2, "encoder": 0, "decoder": 1}
HEADS = ["mean", "1", "2", "3", "4"]
RIGHT, WRONG = ":green[:material/check_circle: right]", ":red[:material/cancel: wrong]"
text = functools.partial(lesson_text, "positions")


def next_shuffle() -> None:
    st.session_state["seed"] = (int(st.session_state.get("seed", 0)) + 1) % (SEED_LIMIT + 1)


# --- 3 · shuffle ------------------------------------------------------------------------------------------


def shuffle_section(controls: UrlControls) -> tuple[tuple[str, ...], int]:
    """The shuffle demo; returns the input letters and the seed, which section 4 uses too."""
    st.divider()
    st.subheader("3 · Without position, attention cannot see order")
    input_col, encoding_col, seed_col, button_col = st.columns([3, 2, 2, 1], vertical_alignment="bottom")
    tokens = tuple(sequence_input(controls, get_task("reverse"), INPUTS, "shuffle_input", "shuffle_text",
                                  label="Input letters (A–P)", text_label="Your letters", unit="letters from A to P",
                                  max_chars=100, where=input_col,
                                  help="2 to 10 letters from A to P, e.g. 'DECADE' or 'D E C A D E'."))
    encoding = controls.selectbox("Encoder of the model with", SHIPPED_ENCODINGS, SHIPPED_ENCODINGS.index("none"),
                                  "shuffle_encoding", where=encoding_col,
                                  help="The encoder of the shipped reversal model with this encoding, run in float64.")
    seed = controls.slider("Shuffle seed", 0, SEED_LIMIT, 0, 1, "seed", where=seed_col,
                           help="Which permutation; the button moves to the next one.")
    button_col.button("Shuffle", on_click=next_shuffle, icon=":material/shuffle:", key="shuffle")
    try:
        result = shuffle_demo(encoding, tokens, seed)
    except PretrainedModelError as problem:  # a damaged shipped model: say so, keep the page going
        result = None
        st.error(str(problem), icon=":material/error:")
    if result is not None:
        before_labels = [f"{p} · {t}" for p, t in enumerate(result.tokens)]
        after_labels = [f"{p} · {t}" for p, t in enumerate(result.shuffled_tokens)]
        scale = float(max(np.abs(result.before).max(), np.abs(result.after).max()))
        plotly_chart(
            panel_grid([result.before, result.after, result.difference],
                       titles=["outputs, original order", "outputs, shuffled input", "shuffled − original, same token"],
                       row_labels=[before_labels, after_labels, after_labels], x_title="dimension",
                       y_title="position", value_name="output", zmin=-scale, zmax=scale, columns=3,
                       panel_height=60 + 34 * len(tokens)),
            width="stretch", key="shuffle_outputs",
        )
        largest = result.max_abs_difference
        st.markdown(
            f"Shuffled input: `{' '.join(result.shuffled_tokens)}`. The encoder of `reverse-{encoding}-h4-l2` "
            f"(float64) gives each token an output vector of {result.before.shape[1]} numbers. **Largest difference "
            f"between a token's output before and after the shuffle: {largest:.1e}**"
            + (" — zero up to rounding: every row just moved with its token." if largest < 1e-9 else
               " — the outputs changed, because the encoder knows where each token stands.")
        )
    st.markdown(text("shuffle"))
    return tokens, seed


# --- 4 · the shipped models ---------------------------------------------------------------------------------


def reversal_section(controls: UrlControls, tokens: tuple[str, ...], seed: int) -> dict[str, ReversalRun]:
    """Every shipped reversal model on the same input: a table, the story, their attention side by side."""
    st.divider()
    st.subheader("4 · Reversing letters with and without position")
    runs, failed = {}, []
    for encoding in SHIPPED_ENCODINGS:
        try:
            runs[encoding] = reversal_run(encoding, tokens)
        except PretrainedModelError as problem:
            failed.append(f"{encoding}: {problem}")
    for message in failed:
        st.error(message, icon=":material/error:")
    summary = pd.DataFrame({
        "encoding": list(runs),
        "answer": [" ".join(run.answer) for run in runs.values()],
        "right?": ["yes" if run.correct else "no" for run in runs.values()],
        "held-out accuracy": [run.heldout_accuracy for run in runs.values()],
        "shuffle difference": [shuffle_demo(e, tokens, seed).max_abs_difference for e in runs],
    })
    table_col, story_col = st.columns([3, 2], gap="large")
    with table_col:
        st.markdown(f"Input `{' '.join(tokens)}` → expected `{' '.join(reversed(tokens))} </s>`")
        st.dataframe(summary, hide_index=True, column_config={
            "held-out accuracy": st.column_config.ProgressColumn(
                format="percent", min_value=0.0, max_value=1.0,
                help="Whole sequences right on 1000 held-out inputs (from the model card)."),
            "shuffle difference": st.column_config.NumberColumn(
                format="%.1e", help="Largest change of any token's encoder output under the shuffle above."),
        })
    with story_col:
        if "none" in runs and "sinusoidal" in runs:
            story = {f"{name}_{what}": value for name in ("none", "sinusoidal") for what, value in (
                ("answer", " ".join(runs[name].answer)), ("verdict", RIGHT if runs[name].correct else WRONG),
                ("accuracy", runs[name].heldout_accuracy))}
            st.markdown(text("reversal: none against sinusoidal", **story))
        st.markdown(text("reversal: the other encodings"))
    attention_by_encoding(controls, runs, tokens)
    return runs


def attention_by_encoding(controls: UrlControls, runs: dict[str, ReversalRun], tokens: tuple[str, ...]) -> None:
    st.markdown("**The same input through each model: attention side by side.**")
    block_col, layer_col, head_col = st.columns(3)
    block = controls.radio("Attention", list(BLOCKS), 0, "att_block", where=block_col, horizontal=True,
                           help="cross: decoder queries, encoder keys · encoder: self-attention over the input · "
                                "decoder: masked self-attention over the answer so far")
    layer = controls.select_slider("Layer", [1, 2], 2, "att_layer", where=layer_col)
    head = controls.radio("Head", HEADS, 0, "att_head", where=head_col, horizontal=True,
                          help="mean: the average of the four heads (heads of different models do different jobs, "
                               "so head k of one model has no counterpart in another).")
    panels, titles, queries, keys = [], [], [], []
    for encoding, run in runs.items():
        attention = run.view.blocks[BLOCKS[block]]
        weights = attention.weights[layer - 1]
        panels.append(weights.mean(axis=0) if head == "mean" else weights[int(head) - 1])
        titles.append(f"{encoding} · {'right' if run.correct else 'wrong'}")
        queries.append(attention.query_tokens)
        keys.append(attention.key_tokens)
    if panels:
        plotly_chart(
            panel_grid(panels, titles=titles, row_labels=queries, col_labels=keys, x_title="key", y_title="query",
                       value_name="weight", scale=SEQUENTIAL, zmin=0.0, zmax=1.0, columns=3,
                       panel_height=110 + 26 * len(tokens), number_format=".2f", label_size=14),
            width="stretch", key="attention_by_encoding",
        )
        st.caption(text("attention by encoding"))
