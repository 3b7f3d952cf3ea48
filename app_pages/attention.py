"""Lesson: self-attention, masking and multi-head attention, live."""

from dataclasses import replace

import numpy as np
import streamlit as st

from explorer.figures import attention as figures
from explorer.figures.common import DIVERGING, heatmap, matrix_csv
from explorer.model.positional import ENCODINGS
from explorer.model.transformer import is_causal
from explorer.serve.later import below_the_fold
from explorer.serve.page import lesson_page, next_lesson
from explorer.training.tasks import get_task
from explorer.ui import download_csv, lesson_text, plotly_chart, presenting, sequence_input
from explorer.views.attention import (
    MASKS,
    PRESETS,
    TRANSFORMER_TASKS,
    ModelChoice,
    PretrainedModelError,
    default_shape,
    referent_head_note,
    shipped_variants,
    view_for,
)

RIGHT, WRONG = ":green[:material/check_circle: correct]", ":red[:material/cancel: wrong]"
BLOCKS = {"encoder": 0, "decoder": 1, "cross": 2}
HEAD_CHOICES, LAYER_CHOICES = [1, 2, 4, 8], [1, 2, 3, 4]
GRID_PANELS = 8  # more panels than this are shown one layer at a time (and always when presenting)
COMPARISONS = ["nothing", *(f"mask: {m}" for m in MASKS), "the other weights", *(f"encoding: {e}" for e in ENCODINGS)]


def clamp_selection(key: str, options: list[int]) -> None:
    """Keep a remembered layer/head choice valid when the model gets fewer layers or heads."""
    if key in st.session_state and st.session_state[key] not in options:
        st.session_state[key] = options[-1]


def natural_mask_of(task) -> str:
    return "causal" if is_causal(task.architecture) else "none"


def reset_for_task() -> None:
    """Task callback: the new task opens on its trained model and natural mask, whatever the previous
    task's settings were (so its link, just `task=…`, reopens exactly that view); the user's own
    later choices then win as usual."""
    name = st.session_state["task"]
    encoding, heads, layers = default_shape(name)
    st.session_state.update(weights="trained", mask=natural_mask_of(get_task(name)), encoding=encoding, heads=heads,
                            layers=layers, block="decoder", layer=layers, head=1, compare="nothing")


shown_errors: set[str] = set()


def run(choice: ModelChoice, tokens: list[str], mask: str, pad_to: int):
    """Model + view for one setting; a broken shipped model falls back to labelled random weights."""
    try:
        return view_for(choice, tuple(tokens), mask, pad_to)
    except PretrainedModelError as problem:
        if str(problem) not in shown_errors:
            shown_errors.add(str(problem))
            st.error(f"{problem}\n\nShowing random weights instead.", icon=":material/error:")
        view, _ = view_for(replace(choice, trained=False), tuple(tokens), mask, pad_to)
        return view, "**random weights** (the trained model could not be loaded)"


def head_section(view, attention, choice: ModelChoice, tokens, mask: str, pad_to: int, layer: int, head: int,
                 block: str, compare: str) -> None:
    """The enlarged head, from scores to weights, and the comparison (under the key figure)."""
    task_name = choice.task
    weights = attention.weights[layer - 1, head - 1]
    st.subheader(f"Layer {layer}, head {head}: from scores to weights")
    plotly_chart(figures.attention_pipeline_figure(
        attention.raw_scores[layer - 1, head - 1], attention.scaled_scores[layer - 1, head - 1],
        attention.masked_scores[layer - 1, head - 1], weights, attention.query_tokens, attention.key_tokens,
        view.head_dim,
    ), key="pipeline")
    st.markdown(lesson_text("attention", "pipeline", head_dim=view.head_dim))
    download_csv(f"attention_{task_name}_{block}_L{layer}_H{head}.csv", "Download this head's weights (CSV)",
                 matrix_csv, weights, attention.query_tokens, attention.key_tokens, corner="query \\ key")

    if compare != "nothing":
        kind, _, value = compare.partition(": ")
        other_mask = value if kind == "mask" else mask
        other_choice = choice
        if kind == "encoding":
            other_choice = replace(choice, encoding=value)
        elif kind == "the other weights":
            other_choice = replace(choice, trained=not choice.trained)
        other_pad = max(len(tokens), pad_to if mask == "padding" else get_task(task_name).max_len)
        other_view, other_label = run(other_choice, tokens, other_mask, other_pad)
        other = other_view.blocks[BLOCKS[block] if len(other_view.blocks) > 1 else 0]
        st.subheader(f"Compare: this view against {compare}")
        st.markdown(f"Right: {other_label}, mask {other_mask}. Answer: `{' '.join(other_view.output_tokens)}`.")
        other_weights = other.weights[min(layer, other.weights.shape[0]) - 1, min(head, other.weights.shape[1]) - 1]
        same_shape = other_weights.shape == weights.shape
        cols = st.columns(3 if same_shape else 2)
        plotly_chart(where=cols[0], figure=heatmap(weights, x_labels=attention.key_tokens,
                                                   y_labels=attention.query_tokens, title="this view", zmin=0,
                                                   zmax=1, annotate=False), key="compare_a")
        plotly_chart(where=cols[1], figure=heatmap(other_weights, x_labels=other.key_tokens,
                                                   y_labels=other.query_tokens, title=compare, zmin=0, zmax=1,
                                                   annotate=False), key="compare_b")
        if same_shape:
            difference = weights - other_weights
            bound = max(1e-9, float(np.abs(difference).max()))
            plotly_chart(where=cols[2], figure=heatmap(difference, x_labels=attention.key_tokens,
                                         y_labels=attention.query_tokens, title="difference (this − other)",
                                         colorscale=DIVERGING, zmin=-bound, zmax=bound,
                                         value_name="Δ weight", annotate=False), key="compare_diff")
        else:
            st.caption("The two views have different sequence lengths, so no difference map is drawn.")


controls, lesson = lesson_page(
    "attention",
    "Self-attention, masking and heads",
    "Every token asks a question (its query) of every token it may see (their keys) and takes a "
    "weighted mix of their values. Each small heatmap below is one head of one layer: row = the "
    "token asking, column = the token looked at, colour = how much weight it gets. The models are "
    "small transformers trained on toy tasks, so their attention has a job to do.",
)
side = st.sidebar
side.header("Model and input")
task_name = controls.selectbox("Task", TRANSFORMER_TASKS, 0, "task", where=side, on_change=reset_for_task)
task = get_task(task_name)
side.caption(task.description)
presets = PRESETS[task_name]
tokens = sequence_input(controls, task, presets, f"input_{task_name}", f"text_{task_name}", label="Input",
                        text_label="Your input", unit="known tokens", max_chars=300, where=side,
                        help="Tokens separated by spaces, from this task's vocabulary.")

trained = controls.radio("Weights", ["trained", "random"], 0, "weights", where=side, horizontal=True) == "trained"
natural_mask = natural_mask_of(task)
mask = controls.radio("Mask", MASKS, MASKS.index(natural_mask), "mask", where=side, horizontal=True,
                      help="For encoder–decoder tasks the mask applies to the decoder's self-attention.")
pad_to = len(tokens)
if mask == "padding":
    limit = max(len(tokens), task.max_len)
    pad_to = max(len(tokens), controls.slider("Pad to length", 2, limit, limit, 1, f"pad_{task_name}", where=side))

side.header("Model shape")
encoding0, heads0, layers0 = default_shape(task_name)
encoding = controls.selectbox("Positional encoding", ENCODINGS, ENCODINGS.index(encoding0), "encoding", where=side)
heads = controls.select_slider("Heads", HEAD_CHOICES, heads0, "heads", where=side)
layers = controls.select_slider("Layers", LAYER_CHOICES, layers0, "layers", where=side)
shipped = ", ".join(f"{e} h{h} l{n}" for e, h, n in shipped_variants(task_name))
side.caption(f"Trained weights are shipped for: {shipped}. Other shapes run with random weights.")

side.header("View")
block = "encoder"
if task.architecture == "encoder-decoder":
    block = controls.radio("Attention", list(BLOCKS), 1, "block", where=side, horizontal=True,
                           help="encoder: self-attention over the input · decoder: masked self-attention "
                                "over the answer so far · cross: decoder queries, encoder keys")
clamp_selection("layer", list(range(1, layers + 1)))
clamp_selection("head", list(range(1, heads + 1)))
layer = controls.select_slider("Enlarge layer", list(range(1, layers + 1)), layers, "layer", where=side)
head = controls.select_slider("Enlarge head", list(range(1, heads + 1)), 1, "head", where=side)
compare = controls.selectbox("Compare with", COMPARISONS, 0, "compare", where=side)

controls.report()
if not lesson.revealed:
    st.stop()

choice = ModelChoice(task_name, encoding, heads, layers, trained)
view, label = run(choice, tokens, mask, pad_to)
attention = view.blocks[BLOCKS[block] if len(view.blocks) > 1 else 0]
st.caption(f"Running {label}.")

answer_left, answer_right = st.columns(2)
answer_left.markdown(f"**Input** &nbsp; `{' '.join(view.input_tokens)}`")
# A verdict only on input the model read whole, and (for "it") on a sentence of its grammar.
expected = task.expected_output(tokens) if tokens.complete else None
NO_VERDICT = " — no verdict: part of the input could not be read" if not tokens.complete else ""
if task.architecture == "encoder-decoder":
    shown = " ".join(view.output_tokens)
    verdict = NO_VERDICT if expected is None else (f" {RIGHT}" if view.output_tokens == expected else f" {WRONG}")
    answer_right.markdown(f"**{view.output_title}** &nbsp; `{shown}`{verdict}")
elif task.name == "coreference":
    it = view.input_tokens.index("it") if "it" in view.input_tokens else None
    if it is not None:
        guess = view.output_tokens[it]
        verdict = (f" {RIGHT}" if [guess] == expected else f" {WRONG} (should be {expected[0]})") \
            if expected is not None else (NO_VERDICT or " — no verdict: this sentence is not of the form the "
                                          "model was trained on (the ANIMAL didn't VERB the NOUN because it was "
                                          "too ADJECTIVE)")
        answer_right.markdown(f"**“it” points to** &nbsp; `{guess}`{verdict}")
else:
    answer_right.markdown(f"**{view.output_title}** &nbsp; `{' '.join(view.output_tokens[:len(tokens)])}`")
    if expected:
        answer_right.caption(f"At '?', the right answer is {expected[0]}: the model says "
                             f"{view.output_tokens[len(tokens) - 1]}.")

allowed = np.isfinite(attention.masked_scores)
paged = presenting() or layers * heads > GRID_PANELS  # one layer's heads at a time, readable
shown_layers = [layer - 1] if paged else list(range(layers))
st.subheader(f"{attention.title}: " + (f"layer {layer} of {layers}, every head" if paged else "every layer and head"))
grid_col, text_col = st.columns([3, 1], gap="large")
with grid_col:
    plotly_chart(figures.attention_grid(attention.weights[shown_layers], attention.query_tokens,
                                        attention.key_tokens, allowed=allowed[shown_layers],
                                        layer_numbers=[n + 1 for n in shown_layers],
                                        selected=(shown_layers.index(layer - 1), head - 1)), key="grid")
    if paged and layers > 1:
        st.caption("One layer at a time, so every label stays readable: choose the layer with *Enlarge layer*.")
    lesson.explain()
with text_col:
    st.markdown(lesson_text("attention", "reading"))
    block_name = block if task.architecture == "encoder-decoder" else "encoder"
    st.markdown(lesson_text("attention", f"notice: {task_name} {block_name}"))
    if mask != natural_mask and trained:
        st.markdown(lesson_text("attention", "off-mask", mask=mask, natural=natural_mask))
    note = referent_head_note(choice) if task.name == "coreference" else None
    if note:  # beside the grid, not above it: the grid stays on a projector's first screen
        st.caption(note)

below_the_fold(head_section, view, attention, choice, tokens, mask, pad_to, layer, head, block, compare)

next_lesson("attention")
