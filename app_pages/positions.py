"""Lesson: positional encodings — the matrices, their geometry, and why attention needs them."""

import numpy as np
import pandas as pd
import streamlit as st

from explorer.figures.common import SEQUENTIAL, matrix_csv
from explorer.figures.positions import line_chart, matrix_heatmap, panel_grid
from explorer.model.positional import ABSOLUTE_ENCODINGS, alibi_slopes, t5_relative_buckets
from explorer.training.tasks import get_task
from explorer.ui import UrlControls, altair_chart, page_header, sequence_input
from explorer.views.positions import (
    LEARNED_MODEL,
    LECTURE_WORDS,
    MAX_DIMS,
    MAX_POSITIONS,
    SHIPPED_ENCODINGS,
    PretrainedModelError,
    column_names,
    draw_plan,
    matrix_view,
    reversal_run,
    shuffle_demo,
)
from explorer.views.relative import (
    alibi_causal_bias,
    rope_offset_scores,
    rope_rotation_degrees,
    rope_vectors,
    t5_exact_buckets,
    t5_offset_buckets,
)

BASES = [10, 30, 100, 300, 1000, 3000, 10000, 30000, 100000]
LECTURE = {"kind": "sinusoidal", "positions": 4, "d_model": 4, "base": 100}
CLASSIC = {"kind": "sinusoidal", "positions": 100, "d_model": 512, "base": 10000}
MEASURES = {"dot product": "dot", "cosine": "cosine"}
INPUTS = ["A B C D E F G", "H E L L O", "J A B B E D C O D E", "B A N A N A"]
SEED_LIMIT = 9999
BLOCKS = {"cross": 2, "encoder": 0, "decoder": 1}
HEADS = ["mean", "1", "2", "3", "4"]
ROPE_DIMS = [2, 4, 8, 16, 32, 64, 128]
ROPE_VECTORS = {"all ones": "ones", "random": "random"}
T5_BUCKETS = [8, 16, 32, 64]
T5_DISTANCES = [8, 16, 32, 64, 128, 256]
SCHEMES = {"RoPE": "rotate q and k by their positions", "ALiBi": "a distance penalty per head",
           "T5": "a learned bias per distance bucket"}
RIGHT, WRONG = ":green[:material/check_circle: right]", ":red[:material/cancel: wrong]"


def preset(settings: dict) -> None:
    """Button callback: move the matrix controls to a preset."""
    st.session_state.update(settings)


def next_shuffle() -> None:
    st.session_state["seed"] = (int(st.session_state.get("seed", 0)) + 1) % (SEED_LIMIT + 1)


def ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def number(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def slope_text(slope: float) -> str:
    inverse = 1.0 / slope
    return f"1/{inverse:.0f}" if abs(inverse - round(inverse)) < 1e-9 else f"{slope:.4g}"


page_header(
    "Positional encodings",
    "Attention compares every token with every other token, and that comparison has no notion of "
    "*where* the tokens are: hand it the same words in another order and it sees the same set. "
    "A positional encoding gives each position its own vector (or changes the scores by how far "
    "apart two tokens are), so that order reaches the model. This page shows the matrices, what "
    "their geometry encodes, and what goes wrong without them.",
)
notes = st.container()
controls = UrlControls()

# --- controls of the encoding matrix (sidebar) ------------------------------------------------------------
side = st.sidebar
side.header("Encoding matrix")
kind = controls.radio("Encoding", ABSOLUTE_ENCODINGS, 0, "kind", where=side, horizontal=True,
                      help="learned: the table the shipped model "
                           f"`{LEARNED_MODEL}` learned; its size is fixed.")
n_positions = controls.slider("Positions", 1, MAX_POSITIONS, LECTURE["positions"], 1, "positions", where=side,
                              disabled=kind == "learned", help="Rows of the matrix: positions 0 … n − 1.")
d_model = controls.slider("Dimensions (d_model)", 1, MAX_DIMS, LECTURE["d_model"], 1, "d_model", where=side,
                          disabled=kind == "learned", help="Columns of the matrix.")
base = controls.select_slider("Base", BASES, LECTURE["base"], "base", where=side, disabled=kind != "sinusoidal",
                              help="Sinusoidal only: dimension pair i turns at frequency 1 / base^(2i/d). "
                                   "The paper uses 10000; the lecture's small table uses 100.")
side.button("Lecture table: “I am a robot”", on_click=preset, args=(LECTURE,), icon=":material/school:",
            help="d = 4, base 100, positions 0–3")
side.button("Classic picture: 100 × 512", on_click=preset, args=(CLASSIC,), icon=":material/image:",
            help="100 positions, 512 dimensions, base 10000")
measure_label = controls.radio("Similarity", list(MEASURES), 0, "similarity", where=side, horizontal=True,
                               help="How two positions' vectors are compared in section 2.")
measure = MEASURES[measure_label]

# --- 1 · the matrix ---------------------------------------------------------------------------------------
try:
    view = matrix_view(kind, n_positions, d_model, float(base), measure)
except PretrainedModelError as problem:  # the learned table lives in a shipped model's weights
    st.error(f"{problem}\n\nShowing the sinusoidal matrix instead.", icon=":material/error:")
    kind = "sinusoidal"
    view = matrix_view(kind, n_positions, d_model, float(base), measure)
n_rows, n_cols = view.shape
plan, drawn = view.plan, view.drawn
lecture_rows = kind != "learned" and n_rows == len(LECTURE_WORDS)
row_labels = [f"{p} · {w}" for p, w in zip(range(n_rows), LECTURE_WORDS, strict=False)] if lecture_rows else None

st.subheader("1 · The encoding matrix: one row per position")
if view.table is None and n_cols > 32:  # a wide matrix gets the full width, the text goes below it
    matrix_col = st.container()
    formula_col, text_col = st.columns(2, gap="large") if kind == "sinusoidal" else (st.container(),) * 2
else:
    matrix_col, text_col = st.columns([3, 2], gap="large")
    formula_col = matrix_col
with matrix_col:
    bound = {"sinusoidal": 1.0, "none": 1.0}.get(kind)
    st.plotly_chart(
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
    rows_text = row_labels or [str(p) for p in plan.rows]
    what = "full matrix" if not plan.downsampled else f"drawn sample ({plan.shape[0]} × {plan.shape[1]} cells)"
    csv_rows, csv_cols = rows_text, [col_names[j] for j in plan.cols]
    # Up to 65 536 cells, ~1 MB of text: built only when the button is clicked (deferred data).
    st.download_button(f"Download the {what} (CSV)", icon=":material/download:", mime="text/csv",
                       file_name=f"positional_{kind}_{n_rows}x{n_cols}.csv", on_click="ignore",
                       data=lambda: matrix_csv(np.round(drawn, 8), csv_rows, csv_cols, corner="position").encode())
with formula_col:
    if kind == "sinusoidal":
        st.markdown(
            r"""
Column $2i$ holds $\sin(p/b^{2i/d})$ and column $2i{+}1$ holds $\cos$ of the same angle, with
$b$ the base and $p$ the position. Each pair of columns is a clock hand turning at its own speed: the
first pair turns by one radian per position, and every later pair turns more slowly, by a factor of
$b^{2/d}$ each time — so the colours change fast on the left and slowly on the right.
"""
        )
with text_col:
    if view.table is not None:
        st.dataframe(
            pd.DataFrame(np.round(view.table, 2), index=row_labels or [str(p) for p in range(n_rows)],
                         columns=col_names),
            column_config={name: st.column_config.NumberColumn(format="%.2f") for name in col_names},
        )
        st.caption("The same numbers, rounded to two decimals. Column headers give the function of p.")
    if kind == "sinusoidal":
        st.markdown(
            r"""
**Why sines and cosines?** Every value stays between −1 and 1 however long the sequence is; every
position gets a different row; and because a sine and cosine pair can be rotated, the row of
position $p+k$ is a fixed rotation of the row of $p$ — the same rotation for every $p$. That makes
"*k* positions apart" something a layer can compute with one matrix, and it is what section 2 shows.
"""
        )
        if lecture_rows and d_model == 4 and base == 100:
            st.markdown("This is the lecture's table for “I am a robot”: with base 100 and d = 4 the "
                        "second pair divides the position by 100^(2/4) = 10.")
    elif kind == "learned":
        st.markdown(
            f"""
No formula: this {n_rows} × {n_cols} table is a weight matrix of `{LEARNED_MODEL}`, started at small
random numbers and trained with everything else, exactly like the word embeddings (BERT and GPT-2 do
the same). Nothing forces any structure on it — whatever helped reversing letters is what it holds.

**Look at the last row.** Inputs have at most 10 letters, so position 10 was never used by the
encoder in training: its row is still the random start. A learned table knows only the positions it
has seen; a sinusoidal one has a row for every position.
"""
        )
    elif kind == "index":
        st.markdown(
            """
The naive idea: add the position number itself. Its values grow with the sequence, so in long
inputs the position outweighs the word; a model trained on short sequences meets numbers it never
saw; and the difference between two positions is buried in the absolute size.

**In these models it is worse: invisible.** Every dimension gets the *same* number, and LayerNorm
subtracts each vector's mean before attention reads it — which removes exactly that number. The
shipped index model is a no-encoding model in disguise: it fails at reversal like the model without
positions, and section 3 finds its encoder just as blind to order.
"""
        )
    else:
        st.markdown(
            """
Nothing is added: every position's vector is zero, so a token's input is its word embedding alone.
Sections 3 and 4 show what that costs: the encoder cannot tell any order of the words from another.
"""
        )
    st.caption(f"Source: {view.source}. Token embeddings are multiplied by √d before the position is added.")

# --- 2 · geometry ----------------------------------------------------------------------------------------
st.divider()
st.subheader("2 · Geometry: what comparing two positions reveals")
sim_rows, sim, share = view.sim_rows, view.similarity, view.offset_share
sim_col, offset_col = st.columns(2, gap="large")
with sim_col:
    sim_labels = row_labels if lecture_rows else None
    st.plotly_chart(
        matrix_heatmap(sim, row_values=sim_rows, col_values=sim_rows, row_labels=sim_labels, col_labels=sim_labels,
                       x_title="position", y_title="position", value_name=measure_label,
                       title=f"PE·PEᵀ ({measure_label})", zmin=-1.0 if measure == "cosine" else None,
                       zmax=1.0 if measure == "cosine" else None, annotate=len(sim_rows) <= 8, number_format=".2f",
                       height=520 if len(sim_rows) > 8 else None),
        width="stretch", key="similarity_matrix",
    )
    if len(sim_rows) < n_rows:
        st.caption(f":material/photo_size_select_small: Drawn for every {ordinal(int(sim_rows[1]))} position "
                   f"({len(sim_rows)} × {len(sim_rows)} of {n_rows} × {n_rows}).")
with offset_col:
    frame = pd.concat([pd.DataFrame({"offset k": np.arange(len(v)), measure_label: v, "from position": f"p = {p}"})
                       for p, v in view.curves.items()])
    if n_rows > 1:
        altair_chart(line_chart, frame, x="offset k", y=measure_label, color="from position",
                     title="Similarity of position p with p + k", height=420, key="offset_curves")
    if share is None:
        verdict = ("every pair of positions compares the same, so the similarity carries no position at all"
                   if kind != "learned" else "the similarity is constant")
        st.markdown(f"**The offset explains:** nothing to explain — {verdict}.")
    else:
        st.markdown(f"**The offset between two positions explains {share:.1%} of this matrix's variation** "
                    "(share of the variance left after replacing every diagonal by its mean).")
st.markdown(
    {
        "sinusoidal": """
Every diagonal of the sinusoidal matrix is constant: the dot product of positions *p* and *s* is
Σᵢ cos((p − s)·ωᵢ), a function of the distance p − s only. So the curves drawn from different starting
positions lie on top of each other. The largest value sits on the diagonal (a position is most like
itself) and neighbours are more alike than distant positions, up to a distance set by the slowest pair.
""",
        "learned": """
The learned matrix was never asked to depend on the distance only, and it does not: the curves from
different starting positions part ways, and the offset explains only part of the similarity. A
learned table can store any pattern training finds useful — but nothing it learns about position 3
carries over to position 300, and it has no row for positions longer than its training inputs.
""",
        "index": """
With the raw index, PE·PEᵀ = d·p·s grows with the positions themselves instead of their distance, and
every row points in the same direction: the cosine similarity of any two positions (except position 0,
whose vector is zero) is exactly 1.
""",
        "none": "With no encoding, every position is the zero vector: there is nothing to compare.",
    }[kind]
)
if kind == "sinusoidal":
    wave_col, wave_text = st.columns([3, 2], gap="large")
    waves = view.wavelengths
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
    with wave_text:
        beyond = int(np.sum(waves > n_rows))
        st.markdown(
            f"""
Pair *i* repeats every 2π·base^(2i/d) positions: from {waves[0]:.3g} positions for the first pair to
{number(waves[-1])} for the last. Fast pairs tell neighbours apart; slow pairs separate distant
positions, like the hands of a clock. Here {beyond} of the {len(waves)} pairs have a wavelength longer
than the {n_rows} positions shown — across the matrix they turn less than one full cycle, which is
why the right-hand columns of a wide matrix change so slowly.
"""
        )

# --- 3 · shuffle ------------------------------------------------------------------------------------------
st.divider()
st.subheader("3 · Without position, attention cannot see order")
task = get_task("reverse")
input_col, encoding_col, seed_col, button_col = st.columns([3, 2, 2, 1], vertical_alignment="bottom")
tokens = tuple(sequence_input(controls, task, INPUTS, "shuffle_input", "shuffle_text", label="Input letters (A–P)",
                              text_label="Your letters", unit="letters from A to P", max_chars=100,
                              where=input_col, help="2 to 10 letters from A to P, e.g. 'DECADE' or 'D E C A D E'."))
shuffle_encoding = controls.selectbox("Encoder of the model with", SHIPPED_ENCODINGS, SHIPPED_ENCODINGS.index("none"),
                                      "shuffle_encoding", where=encoding_col,
                                      help="The encoder of the shipped reversal model with this encoding, "
                                           "run in float64.")
seed = controls.slider("Shuffle seed", 0, SEED_LIMIT, 0, 1, "seed", where=seed_col,
                       help="Which permutation; the button moves to the next one.")
button_col.button("Shuffle", on_click=next_shuffle, icon=":material/shuffle:", key="shuffle")

try:
    result = shuffle_demo(shuffle_encoding, tokens, seed)
except PretrainedModelError as problem:  # a damaged shipped model: say so, keep the page going
    result = None
    st.error(str(problem), icon=":material/error:")
if result is not None:
    before_labels = [f"{p} · {t}" for p, t in enumerate(result.tokens)]
    after_labels = [f"{p} · {t}" for p, t in enumerate(result.shuffled_tokens)]
    scale = float(max(np.abs(result.before).max(), np.abs(result.after).max()))
    st.plotly_chart(
        panel_grid([result.before, result.after, result.difference],
                   titles=["outputs, original order", "outputs, shuffled input", "shuffled − original, same token"],
                   row_labels=[before_labels, after_labels, after_labels], x_title="dimension", y_title="position",
                   value_name="output", zmin=-scale, zmax=scale, columns=3, panel_height=60 + 34 * len(tokens)),
        width="stretch", key="shuffle_outputs",
    )
    order_text = " ".join(result.shuffled_tokens)
    largest = result.max_abs_difference
    blind = largest < 1e-9
    st.markdown(
        f"Shuffled input: `{order_text}`. The encoder of `reverse-{shuffle_encoding}-h4-l2` (float64) gives "
        f"each token an output vector of {result.before.shape[1]} numbers. **Largest difference between a "
        f"token's output before and after the shuffle: {largest:.1e}**"
        + (" — zero up to rounding: every row just moved with its token." if blind else
           " — the outputs changed, because the encoder knows where each token stands.")
    )
st.markdown(
    """
Without positional information, self-attention treats its input as a *set*: each token's query is
compared with every key, the softmax weights do not care in which order the keys come, and the
feed-forward layer treats every position alike. Shuffle the input and you get the same output rows,
shuffled the same way: with the encoder of the `none` model the right-hand panel stays blank. Add
positions and the same letter at another place becomes a different input, so its output changes.
"""
)

# --- 4 · the shipped models ---------------------------------------------------------------------------------
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
summary = pd.DataFrame(
    {
        "encoding": list(runs),
        "answer": [" ".join(run.answer) for run in runs.values()],
        "right?": ["yes" if run.correct else "no" for run in runs.values()],
        "held-out accuracy": [run.heldout_accuracy for run in runs.values()],
        "shuffle difference": [shuffle_demo(e, tokens, seed).max_abs_difference for e in runs],
    }
)
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
        none_run, sin_run = runs["none"], runs["sinusoidal"]
        st.markdown(
            f"""
Six copies of the same small encoder–decoder, trained the same way, differ only in their
positional information. Without it (`none`) the model answers `{' '.join(none_run.answer)}`
({RIGHT if none_run.correct else WRONG}) and gets {none_run.heldout_accuracy:.0%} of held-out inputs
right; with the sinusoidal encoding it answers `{' '.join(sin_run.answer)}`
({RIGHT if sin_run.correct else WRONG}), {sin_run.heldout_accuracy:.0%}. To reverse, the decoder must
know which letter came last — information that only positions supply.
"""
        )
    st.markdown(
        """
**Index** fails like **none** (LayerNorm erases it, see section 1). **ALiBi** fails too: its bias
depends on |q − k| only, so the encoder cannot tell left from right and treats a word and its mirror
image alike; the cross-attention, which has no bias, cannot tell them apart either. **RoPE** rotates
by the *signed* offset and learns the task.
"""
    )

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
    st.plotly_chart(
        panel_grid(panels, titles=titles, row_labels=queries, col_labels=keys, x_title="key", y_title="query",
                   value_name="weight", scale=SEQUENTIAL, zmin=0.0, zmax=1.0, columns=3,
                   panel_height=110 + 26 * len(tokens), number_format=".2f", label_size=14),
        width="stretch", key="attention_by_encoding",
    )
    st.caption(
        "Rows sum to 1. In the cross-attention of the models that reverse correctly, the weight runs along the "
        "anti-diagonal: to write its k-th letter the decoder reads the k-th letter from the end. Without usable "
        "positions the encoder outputs for the letters carry no place, so the decoder has nothing to aim at."
    )

# --- 5 · relative schemes -------------------------------------------------------------------------------------
st.divider()
st.subheader("5 · Relative schemes: position inside the attention score")
st.markdown(
    """
The encodings above are *absolute*: a vector per position, added to the input once. Relative schemes
leave the input alone and act where positions are compared — in each attention score — so what a
head sees is how far apart two tokens are, not where they are. There is no table with a last row, so
they accept any length — how well a model copes with distances it never met in training is another
question.
"""
)
scheme = controls.radio("Relative scheme", list(SCHEMES), 0, "scheme", horizontal=True,
                        help=" · ".join(f"{name}: {what}" for name, what in SCHEMES.items()))
st.markdown(f"#### {scheme}: {SCHEMES[scheme]}")
if scheme == "RoPE":
    a, b, c, d = st.columns(4)
    rope_dim = controls.select_slider("Head dimension", ROPE_DIMS, 16, "rope_dim", where=a,
                                      help="The shipped models have 64 / 4 heads = 16.")
    rope_positions = controls.slider("Positions", 2, MAX_POSITIONS, 64, 1, "rope_positions", where=b)
    rope_base = controls.select_slider("Base", BASES, 10000, "rope_base", where=c)
    vectors = ROPE_VECTORS[controls.radio("q and k", list(ROPE_VECTORS), 0, "rope_vectors", where=d,
                                          horizontal=True, help="random: fixed normal vectors (seed 0)")]
    angle_col, score_col = st.columns(2, gap="large")
    degrees = rope_rotation_degrees(rope_positions, rope_dim, float(rope_base))
    rope_plan = draw_plan(*degrees.shape)
    with angle_col:
        st.plotly_chart(
            matrix_heatmap(degrees[np.ix_(rope_plan.rows, rope_plan.cols)], row_values=rope_plan.rows,
                           col_values=rope_plan.cols, x_title="dimension pair", y_title="position",
                           value_name="angle (°)", title="Rotation of each pair, modulo 360°", zmin=-180.0,
                           zmax=180.0, number_format=".0f", height=460),
            width="stretch", key="rope_angles",
        )
    q, k = rope_vectors(rope_dim, vectors)
    rope_run = runs.get("rope")
    rope_accuracy = ("" if rope_run is None or rope_run.heldout_accuracy is None else
                     f" The shipped RoPE model reverses {rope_run.heldout_accuracy:.0%} of held-out inputs.")
    offsets = np.arange(-(rope_positions - 1), rope_positions)
    query_positions = [rope_positions - 1, 2 * (rope_positions - 1)]
    scores = rope_offset_scores(q, k, query_positions, offsets, float(rope_base))
    score_frame = pd.concat([pd.DataFrame({"offset (key − query)": offsets, "score q·k": row,
                                           "query at": f"position {m}"})
                             for m, row in zip(query_positions, scores, strict=True)])
    with score_col:
        altair_chart(line_chart, score_frame, x="offset (key − query)", y="score q·k", color="query at",
                     title="Score of the same q and k at every offset", height=460, key="rope_scores")
    st.markdown(
        f"""
RoPE turns each pair of a query's or key's dimensions by an angle proportional to its position,
using the sinusoidal encoding's frequencies. When both are turned by their own positions, their dot
product only feels the *difference* of the two angles, so q·k depends on the content and the offset
alone: the curves for the query at position {query_positions[0]} and at {query_positions[1]} lie on
top of each other. With q = k = all ones the score is 2 Σᵢ cos(offset·θᵢ) — twice the sinusoidal
PE·PEᵀ of section 2 with d = {rope_dim} and the same base — highest at offset 0, where every pair
lines up.{rope_accuracy}
"""
    )
elif scheme == "ALiBi":
    a, b, _ = st.columns([1, 1, 2])
    alibi_heads = controls.slider("Heads", 1, 16, 4, 1, "alibi_heads", where=a,
                                  help="The shipped ALiBi model has 4 heads.")
    alibi_length = controls.slider("Sequence length", 2, 32, 8, 1, "alibi_length", where=b)
    bias = alibi_causal_bias(alibi_heads, alibi_length)
    slopes = alibi_slopes(alibi_heads)
    alibi_columns = 4 if alibi_heads >= 4 else alibi_heads
    st.plotly_chart(
        panel_grid(list(bias), titles=[f"head {h + 1} · slope {slope_text(s)}" for h, s in enumerate(slopes)],
                   x_title="key position", y_title="query position", value_name="bias", columns=alibi_columns,
                   panel_height=max(220, 1200 // alibi_columns - 60), number_format=".3f", label_size=13),
        width="stretch", key="alibi_bias",
    )
    st.markdown(
        """
ALiBi adds −slope × distance to the score of every key the query may see (blank cells are masked by
the causal mask): the farther back a key, the lower its score, by a slope that differs per head. Steep
heads look at their neighbours; heads with a slope near 0 (pale panels) look almost anywhere. Nothing
is added to the input and nothing is learned. The slopes form a geometric sequence: for 8 heads, 1/2,
1/4, …, 1/256.
"""
    )
else:
    a, b, c, d = st.columns(4)
    t5_length = controls.slider("Sequence length", 2, 256, 48, 1, "t5_length", where=a)
    t5_buckets = controls.select_slider("Buckets", T5_BUCKETS, 32, "t5_buckets", where=b)
    t5_max = controls.select_slider("Max distance", T5_DISTANCES, 128, "t5_max_distance", where=c,
                                    help="Offsets at least this far share the last bucket.")
    bidirectional = controls.toggle("Both directions", True, "t5_bidirectional", where=d,
                                    help="Encoders look both ways (half the buckets for keys after the query); "
                                         "a causal decoder only back.")
    exact = t5_exact_buckets(t5_buckets, bidirectional)
    if t5_max <= exact:
        usable = next(d for d in T5_DISTANCES if d > exact)
        controls.note(f"**Max distance**: with {t5_buckets} buckets the first {exact} offsets each get their own "
                      f"bucket, so the maximum distance must be larger; {usable} is used instead of {t5_max}.")
        t5_max = usable
    buckets = t5_relative_buckets(t5_length, None, bidirectional, t5_buckets, t5_max)
    bucket_col, step_col = st.columns(2, gap="large")
    with bucket_col:
        st.plotly_chart(
            matrix_heatmap(buckets, x_title="key position", y_title="query position", value_name="bucket",
                           title="Bucket of each (query, key) pair", scale=SEQUENTIAL, zmin=0,
                           zmax=t5_buckets - 1, number_format=".0f", height=460),
            width="stretch", key="t5_buckets_matrix",
        )
    offsets_t5, bucket_of = t5_offset_buckets(t5_length - 1, bidirectional, t5_buckets, t5_max)
    with step_col:
        altair_chart(line_chart, pd.DataFrame({"offset (key − query)": offsets_t5, "bucket": bucket_of}),
                     x="offset (key − query)", y="bucket", step=True, number_format=".0f",
                     title="Bucket against offset", height=460, key="t5_steps")
    st.markdown(
        """
T5 learns one number per head for each *bucket* of offsets and adds it to the score. Near offsets get
a bucket each; farther ones share buckets that widen logarithmically, and everything beyond the
maximum distance falls into the last one — a model rarely needs to tell distance 90 from 91. Like
ALiBi it changes only the scores, but what each bucket adds is learned.
"""
    )

with notes:
    controls.report()
