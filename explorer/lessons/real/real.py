"""Lesson: a real model — all-MiniLM-L6-v2's attention, computed by this app's own encoder.

Four sections: one head large for a sentence and every head under it (the key figure); the lecture's
tired / wide pair and its difference; what the heads do with "it", measured on 1000 sentences; the
learned position table beside the sinusoidal one.  The lesson is declared in
explorer.lessons.real.view; its prose is in lessons/real.md, its numbers read from the views."""

import functools

import streamlit as st

from explorer.figures.common import matrix_csv
from explorer.kit.draw import Section, claimed, download_csv, escape_markdown, lesson_text, plotly_chart
from explorer.lessons.real.heads import PAGE_MAX_TOKENS
from explorer.lessons.real.spec import REAL, REAL_REFERENT, REAL_TABLES
from explorer.lessons.real.view import sentence_facts, sentence_problem
from explorer.serve.adapter import serve_lesson

text = functools.partial(lesson_text, "real")
GRID_CLAIMS = ("head_kinds", "previous_token", "next_token", "cls_share")  # shown where each holds for the sentence


def sentence(shown) -> None:
    """The key figure: the chosen head large, as a heatmap and as lines (its row of "it" where the sentence
    has one), then every head of every layer, the chosen one framed."""
    view, settings = shown.view.text, shown.settings
    if view.cut:
        st.warning(f"Cut to fit: the last {view.cut} word pieces were left out (at most {PAGE_MAX_TOKENS - 2} fit).",
                   icon=":material/content_cut:")
    st.markdown(f"**The model reads** &nbsp; {' · '.join(escape_markdown(token) for token in view.tokens)}")
    it = view.index("it")
    asking = " · the row of “it”" if it is not None else ""
    st.subheader(f"Layer {settings.layer}, head {settings.head}{asking}")
    heat_col, lines_col = st.columns([3, 2], gap="medium")
    plotly_chart(shown.figures.enlarged, where=heat_col, key="enlarged")
    heat_col.caption("Rows: the token asking (query). Columns: the token looked at (key).")
    plotly_chart(shown.figures.lines, where=lines_col, key="head_lines", phone_fits=True)
    lines_col.caption("The row of “it” as lines: the thicker, the more weight; its weights of 0.02 or more "
                      "are printed beside their key." if it is not None else
                      "The head as lines: each query (left) to the keys it reads (right); the thicker, the more "
                      "weight.")
    st.markdown("**Every head of every layer**, the large one framed: *Layer* and *Head* choose it.")
    plotly_chart(shown.figures.overview, key="overview")


def enlarged(shown) -> None:
    """The chosen head's weights to download, and how to read the grid."""
    view, settings = shown.view.text, shown.settings
    layer, head = settings.layer, settings.head
    download_csv(f"minilm_L{layer}_H{head}.csv", "Download the large head's weights (CSV)", matrix_csv,
                 view.weights[layer - 1, head - 1], list(view.tokens), list(view.tokens),
                 corner="query \\ key", key="head_csv")
    facts = sentence_facts(shown)
    st.markdown(text("reading the grid", **facts))
    for name in GRID_CLAIMS:
        sentence = claimed(REAL, name, shown)
        if sentence is not None:
            st.markdown(sentence)
    st.markdown(text("word pieces", **facts))


def pair(shown) -> None:
    """The lecture's pair in the chosen head, and their difference."""
    st.subheader("The lecture's pair: one word changed")
    plotly_chart(shown.figures.pair, key="pair")
    facts = sentence_facts(shown)
    st.markdown(text("pair numbers", **facts))
    st.markdown(text("pair"))
    sentence = claimed(REAL, "pair_l4h2", shown)  # it moves the right way and never picks the street
    if sentence is not None:
        st.markdown(sentence)
    st.markdown(text("pair: anecdote"))


def referent(shown) -> None:
    """What the heads do with "it", measured on the task's held-out sentences (its control is above it)."""
    map_col, text_col = st.columns([3, 2], gap="large")
    plotly_chart(shown.figures.map, where=map_col, key="referent_map")
    text_col.markdown(text("referent", **shown.view.facts))
    steered = claimed(REAL_REFERENT, "toy_steered", shown)  # the toy's best head was steered by an extra loss
    if steered is not None:
        text_col.markdown(steered)


def position_tables(shown) -> None:
    """MiniLM's learned position table beside the sinusoidal one."""
    view = shown.view
    facts = view.facts
    for column, (name, figure) in zip(st.columns(2), (("learned", shown.figures.learned),
                                                       ("sinusoi", shown.figures.sinusoidal)), strict=True):
        plotly_chart(figure, where=column, key=f"pe_{name}")
    st.caption(f"Drawn: every {facts['row_step']}th position and every {facts['col_step']}th dimension (hover shows "
               f"the true indices). The learned table's colours stop at ±{facts['clip']:.3f}, where 99 % of its values "
               f"lie; a few dimensions reach {facts['largest']:.1f}.")
    st.markdown(text("positions", **facts))


def model_card(shown) -> None:
    facts = shown.view.model
    st.caption(f"all-MiniLM-L6-v2: {facts['parameters']:,} parameters ({facts['layers']} layers × {facts['heads']} "
               f"heads, d = {facts['d_model']}, feed-forward {facts['d_ff']}, {facts['positions']} positions, "
               f"{facts['vocabulary']:,} word pieces), read from pretrained/all-MiniLM-L6-v2 by this app's own "
               f"encoder code in {facts['load_seconds']:.1f} s when this server first needed it.")


serve_lesson(
    REAL,
    # The shipped toy models trained in 4 s to 7 min each (their cards' wall_time_s); the encoders lesson runs
    # MiniLM too.  "A billion pairs": the model card of sentence-transformers/all-MiniLM-L6-v2 (fine-tuned from
    # nreimers/MiniLM-L6-H384-uncased, config.json's _name_or_path, "on a 1B sentence pairs dataset" with a
    # contrastive objective).
    lead="Most other pages run toy models, trained here in seconds to minutes on made-up tasks. This one runs "
    "**all-MiniLM-L6-v2**, a real sentence encoder (the encoders page uses it too), fine-tuned on a billion "
    "pairs of related sentences: "
    "6 layers of 12 heads, post-norm, GELU, learned positions — computed here by the same encoder "
    "code as the toy models, with its published weights loaded in. Type a sentence and see all 72 "
    "heads at once; then see what they do with the lecture's “it”.",
    sidebar="Sentence",
    notes=lambda settings: [("Your sentence", problem)] if (problem := sentence_problem(settings)) else [],
    sections=[
        Section("sentence", sentence),
        Section("enlarged", enlarged),
        Section("pair", pair),
        Section("referent", referent, part=REAL_REFERENT, title="What the heads do with “it”, measured"),
        Section("positions", position_tables, part=REAL_TABLES,
                title="Its positions: a learned table beside the sinusoidal one"),
        Section("model", model_card),
    ],
    working=lambda settings: "Running all-MiniLM-L6-v2 (loaded once per server)…",
    unavailable="The real model could not be loaded; every other page works without it.",
)
