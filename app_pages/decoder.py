"""Lesson: the decoder at work — generation step by step, teacher forcing, the KV cache, and the
three architectures."""

import functools

import numpy as np
import streamlit as st

from app_pages.decoder_sections import architecture_section, cache_section, forcing_section
from explorer.figures import decoder as figures
from explorer.serve.later import below_the_fold
from explorer.serve.page import lesson_page, next_lesson
from explorer.training.tasks import get_task
from explorer.ui import lesson_text, plotly_chart, sequence_input
from explorer.views.decoder import (
    DECODER_MODELS,
    PRESETS,
    PretrainedModelError,
    decoding_run,
    example,
    model_shape,
)

ARCHITECTURES = {"encoder-decoder": "an encoder–decoder", "decoder": "decoder-only"}
WIDTHS = [64, 128, 256, 512, 768, 1024]
VOCABULARIES = [19, 100, 1000, 10000, 32000, 50000]
ARCH_KEYS = ("arch_d", "arch_layers", "arch_vocab")  # section 4's controls, made beside it (a fragment)
TOP_K = 5
SECTIONS = {"forcing": "2 · teacher forcing", "cache": "3 · the KV cache", "architectures": "4 · the architectures"}
text = functools.partial(lesson_text, "decoder")


def clamp(key: str, options: list) -> None:
    """Keep a remembered choice valid when the input gets shorter (fewer steps, layers, heads)."""
    if key in st.session_state and st.session_state[key] not in options:
        st.session_state[key] = options[-1]


def clamp_range(key: str, low: int, high: int) -> None:
    value = st.session_state.get(key)
    if isinstance(value, int) and not low <= value <= high:
        st.session_state[key] = max(low, min(high, value))


controls, lesson = lesson_page("decoder", "The decoder at work", text("lead"))
side = st.sidebar
side.header("Model and input")
task_name = controls.selectbox("Model", list(DECODER_MODELS), 0, "task", where=side)
task = get_task(task_name)
side.caption(f"`{DECODER_MODELS[task_name]}`, {ARCHITECTURES[task.architecture]}: {task.description}")
seq2seq = task.architecture == "encoder-decoder"
tokens = sequence_input(controls, task, PRESETS[task_name], f"input_{task_name}", f"text_{task_name}",
                        label="Input" if seq2seq else "Prompt", text_label="Your input", max_chars=300, where=side,
                        unit="letters from A to P" if seq2seq else "known tokens (t0 … t23)",
                        help="Letters A–P separated by spaces (or one word)." if seq2seq else
                        "Tokens t0 … t23 separated by spaces; a run of different tokens, then its start again.")
if not seq2seq and len(tokens) > task.max_len - 4:
    st.warning(f"The prompt was cut to its first {task.max_len - 4} tokens, leaving room to write.")
    tokens = tokens[:task.max_len - 4]
ex = example(task_name, tuple(tokens))
n_layers, n_heads = model_shape(task_name)

side.header("Attention shown")
clamp("layer", list(range(1, n_layers + 1)))
clamp("head", ["mean", *map(str, range(1, n_heads + 1))])
layer = controls.select_slider("Layer", list(range(1, n_layers + 1)), n_layers, "layer", where=side)
head = controls.select_slider("Head", ["mean", *map(str, range(1, n_heads + 1))], "mean", "head", where=side,
                              help="One head, or the mean of the layer's heads.")
side.header("Teacher forcing")
mistake_options = ["none", *map(str, range(1, ex.n_steps + 1))]
clamp("mistake", mistake_options)
mistake_choice = controls.select_slider("Wrong token at step", mistake_options, "none", "mistake", where=side,
                                        help="Make the model write a wrong token at this step (the likeliest "
                                             "wrong one) and see where it goes.")
mistake = None if mistake_choice == "none" else int(mistake_choice) - 1

clamp_range("t", 1, ex.n_steps)
slider_col, status_col = st.columns([2, 3], gap="large", vertical_alignment="bottom")
step = controls.slider("Step", 1, ex.n_steps, 1, 1, "t", where=slider_col,
                       help="Each step reads everything written so far and writes one token.")
notes = st.container()  # the link's notes, written last: section 4's controls are made beside it
if not lesson.revealed:
    with notes:
        controls.report(later=ARCH_KEYS)
    st.stop()
if lesson.step is not None and lesson.step.section:
    st.caption(f":material/arrow_downward: This step's figure is further down: "
               f"[{SECTIONS[lesson.step.section]}](#{lesson.step.section}).")

try:
    run = decoding_run(task_name, ex.tokens)
except PretrainedModelError as problem:
    st.error(f"{problem}\n\nThe decoding sections need this model; the architectures below do not.",
             icon=":material/error:")
    run = None

if run is not None:
    k = step - 1
    order = np.argsort(-run.probs[k], kind="stable")[:TOP_K]
    head_index = None if head == "mean" else int(head) - 1

    def weights(array: np.ndarray) -> np.ndarray:
        chosen = array[:, layer - 1].mean(axis=1) if head_index is None else array[:, layer - 1, head_index]
        shown = np.array(chosen, dtype=np.float64)
        shown[step:] = np.nan  # steps not taken yet
        return shown

    written_so_far = " ".join(run.written[:k]) or "(nothing yet)"
    source_line = f"**Source** `{' '.join(ex.tokens)}` → " if seq2seq else f"**Prompt** `{' '.join(ex.tokens)}` → "
    status_col.markdown(f"{source_line}**written so far** `{written_so_far}` · step {step} reads "
                        f"`{run.queries[k]}` and writes **`{run.written[k]}`** (p = {run.probs[k, order[0]]:.2f})")
    future = ["?"] * (ex.n_steps - step)
    queries = [*run.queries[:step], *future]
    first = len(run.keys) - ex.n_steps + 1  # keys read by the first step: <s>, or the whole prompt
    keys = [*run.keys[:first + k], *(["?"] * (len(run.keys) - first - k))]
    plotly_chart(figures.step_figure(
        [run.vocab[i] for i in order], run.probs[k, order], run.written[k], weights(run.self_weights), queries, keys,
        None if run.cross_weights is None else weights(run.cross_weights), list(ex.tokens), k,
        height=380 if ex.n_steps <= 8 else 440), key="step_figure")
    lesson.explain()
    st.caption(text("step: reading", cross_sentence=text("step: cross" if seq2seq else "step: no cross")))
    below_the_fold(forcing_section, ex, mistake, lesson)
    below_the_fold(cache_section, ex, step, n_layers, lesson)
else:
    lesson.explain()
below_the_fold(architecture_section, controls, lesson, WIDTHS, VOCABULARIES, controls=controls, keys=ARCH_KEYS)
with notes:
    controls.report()
next_lesson("decoder")
