"""Lesson: a real model — all-MiniLM-L6-v2's attention, computed by this app's own encoder.

Four sections: every head for a sentence (the key figure) with one head enlarged; the lecture's
tired / wide pair and its difference; what the heads do with "it", measured on 1000 sentences; the
learned position table beside the sinusoidal one.  The prose is in lessons/real.md."""

import functools

import numpy as np
import streamlit as st

from explorer.figures import real as figures
from explorer.figures.common import heatmap, matrix_csv
from explorer.figures.positions import matrix_heatmap
from explorer.serve.later import below_the_fold
from explorer.serve.page import lesson_page, next_lesson
from explorer.ui import OWN_TEXT, download_csv, escape_markdown, lesson_text, plotly_chart
from explorer.views.positions import draw_plan
from explorer.views.real import (
    MAX_CHARS,
    PAGE_MAX_TOKENS,
    PRESETS,
    MiniLMError,
    RealView,
    model_facts,
    pair_views,
    position_tables,
    real_view,
    referent_heads,
)

LAYERS, HEADS = list(range(1, 7)), list(range(1, 13))
SPLITS = {"all sentences": "overall", "“it” means the subject": "when_subject", "“it” means the object": "when_object"}
text = functools.partial(lesson_text, "real")


def shown_tokens(view: RealView) -> str:
    """The word pieces as the model reads them, escaped, separated by thin bars."""
    return " · ".join(escape_markdown(token) for token in view.tokens)


def enlarged(view: RealView, layer: int, head: int, title: str, key: str) -> None:
    plotly_chart(heatmap(view.weights[layer - 1, head - 1], x_labels=view.tokens, y_labels=view.tokens,
                         title=title, zmin=0, zmax=1, annotate=False, height=560), key=key)


def sentence_section(view: RealView, layer: int, head: int) -> None:
    st.subheader("Every head of every layer")
    plotly_chart(figures.head_overview(view.weights, view.tokens, selected=(layer - 1, head - 1)), key="overview")
    lesson.explain()
    head_col, text_col = st.columns([3, 2], gap="large")
    with head_col:
        enlarged(view, layer, head, f"Layer {layer}, head {head} (framed above)", "enlarged")
        download_csv(f"minilm_L{layer}_H{head}.csv", "Download this head's weights (CSV)", matrix_csv,
                     view.weights[layer - 1, head - 1], list(view.tokens), list(view.tokens),
                     corner="query \\ key", key="head_csv")
    with text_col:
        st.markdown(text("reading the grid"))


def pair_section(layer: int, head: int) -> None:
    st.divider()
    st.subheader("The lecture's pair: one word changed")
    tired, wide = pair_views()
    plotly_chart(figures.pair_figure(tired.weights[layer - 1, head - 1], wide.weights[layer - 1, head - 1],
                                     tired.tokens, wide.tokens, ("tired", "wide")), key="pair")
    it, animal, street = (tired.index(word) for word in ("it", "animal", "street"))
    weights = {name: v.weights[layer - 1, head - 1, it, [animal, street]].tolist()
               for name, v in (("tired", tired), ("wide", wide))}
    st.markdown(text("pair numbers", layer=layer, head=head, tired_animal=weights["tired"][0],
                     tired_street=weights["tired"][1], wide_animal=weights["wide"][0], wide_street=weights["wide"][1]))
    st.markdown(text("pair"))


@st.fragment
def referent_section() -> None:
    """The "it" score map with its own control beside it: choosing the sentences reruns this section only."""
    st.divider()
    st.subheader("What the heads do with “it”, measured")
    split = controls.radio("“it” scores over", list(SPLITS), 0, "split", horizontal=True,
                           help="Which of the 1000 sentences the map of “it” scores counts.")
    try:
        referent_body(split)
    except MiniLMError as problem:
        st.error(escape_markdown(problem), icon=":material/error:")


def referent_body(split: str) -> None:
    scores = referent_heads()
    best = scores.best[0]
    shares = getattr(scores, SPLITS[split])
    top = [(b["layer"] - 1, b["head"] - 1) for b in scores.best[:3]]
    map_col, text_col = st.columns([3, 2], gap="large")
    with map_col:
        plotly_chart(figures.head_score_map(shares, title=f"% of sentences where “it” weighs the right noun more "
                                                          f"({split})", value_name="right noun above",
                                            highlight=top), key="referent_map")
    with text_col:
        listed = "; ".join(f"layer {b['layer']} head {b['head']}: {b['right_above_other']:.0%} "
                           f"({b['when_subject']:.0%} when “it” means the subject, {b['when_object']:.0%} when it "
                           "means the object)" for b in scores.best[:3])
        st.markdown(text("referent", sentences=scores.sentences, seed=scores.seed, best=best["right_above_other"],
                         layer=best["layer"], head=best["head"], listed=listed,
                         both=int(np.sum(np.minimum(scores.when_subject, scores.when_object) > 0.5)),
                         regenerate=scores.regenerate))


def positions_section() -> None:
    st.divider()
    st.subheader("Its positions: a learned table beside the sinusoidal one")
    learned, sinusoidal, clip = position_tables()
    plan = draw_plan(*learned.shape, budget=96 * 96)  # two of them: 36 KB of float32 each
    cols = st.columns(2)
    tables = (("learned by MiniLM", learned, clip), ("sinusoidal (the paper)", sinusoidal, 1.0))
    for col, (name, table, bound) in zip(cols, tables, strict=True):
        with col:
            plotly_chart(matrix_heatmap(table[np.ix_(plan.rows, plan.cols)], row_values=plan.rows, col_values=plan.cols,
                                        x_title="dimension", y_title="position", value_name="value", zmin=-bound,
                                        zmax=bound, title=f"{name}: 512 × 384", height=520), key=f"pe_{name[:7]}")
    st.caption(f"Drawn: every {plan.row_step}th position and every {plan.col_step}th dimension (hover shows the true "
               f"indices). The learned table's colours stop at ±{clip:.3f}, where 99 % of its values lie; a few "
               f"dimensions reach {np.abs(learned).max():.1f}.")
    st.markdown(text("positions"))


# --- the page ---------------------------------------------------------------------------------------------

controls, lesson = lesson_page(
    "real",
    "A real model: MiniLM",
    "The other pages run toy models trained for a minute on made-up tasks. This one runs "
    "**all-MiniLM-L6-v2**, a real sentence encoder, fine-tuned on a billion pairs of related sentences: "
    "6 layers of 12 heads, post-norm, GELU, learned positions — computed here by the same encoder "
    "code as the toy models, with its published weights loaded in. Type a sentence and see all 72 "
    "heads at once; then see what they do with the lecture's “it”.",
)
side = st.sidebar
side.header("Sentence")
picked = controls.selectbox("Sentence", [*PRESETS, OWN_TEXT], 0, "sentence", where=side)
sentence = PRESETS.get(picked, "")
if picked == OWN_TEXT:
    sentence = controls.text_area("Your sentence", PRESETS["too tired"], "text", MAX_CHARS, where=side,
                                  help=f"Any text; the model reads at most {PAGE_MAX_TOKENS} word pieces here.")
else:
    side.caption(f"“{escape_markdown(sentence)}”")
side.header("Enlarge")
layer = controls.select_slider("Layer", LAYERS, 4, "layer", where=side)
head = controls.select_slider("Head", HEADS, 2, "head", where=side)
notes = st.container()  # the link's notes, written last: the "it" section's control is made further down
if not lesson.revealed:
    with notes:
        controls.report(later=("split",))
    st.stop()

try:
    with st.spinner("Loading all-MiniLM-L6-v2 (once per server)…"):
        facts = model_facts()
    view = real_view(sentence)
except MiniLMError as problem:
    st.error(f"The real model could not be loaded.\n\n{escape_markdown(problem)}\n\nEvery other page works "
             "without it.", icon=":material/error:")
    with notes:
        controls.report(later=("split",))
    next_lesson("real")
    st.stop()

cut = ([f"only the first {MAX_CHARS} characters are read"] if len(sentence) > MAX_CHARS else []) + \
    ([f"the last {view.cut} word pieces were left out (at most {PAGE_MAX_TOKENS - 2} fit)"] if view.cut else [])
if cut:
    st.warning(f"Cut to fit: {'; '.join(cut)}.", icon=":material/content_cut:")
st.markdown(f"**The model reads** &nbsp; {shown_tokens(view)}")
sentence_section(view, layer, head)
below_the_fold(pair_section, layer, head)
below_the_fold(referent_section, controls=controls, keys=("split",))
below_the_fold(positions_section)
st.caption(f"all-MiniLM-L6-v2: {facts['parameters']:,} parameters ({facts['layers']} layers × {facts['heads']} heads, "
           f"d = {facts['d_model']}, feed-forward {facts['d_ff']}, {facts['positions']} positions, "
           f"{facts['vocabulary']:,} word pieces), read from pretrained/all-MiniLM-L6-v2 by this app's own "
           f"encoder code in {facts['load_seconds']:.1f} s when this server first needed it.")
with notes:
    controls.report()
next_lesson("real")
