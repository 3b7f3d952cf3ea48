"""Sections 2–4 of the decoder page (app_pages/decoder.py), which calls them; not a page of its own:
teacher forcing against free running, the KV cache, and the three architectures."""

import functools

import numpy as np
import pandas as pd
import streamlit as st

from explorer.figures import decoder as figures
from explorer.ui import Lesson, UrlControls, lesson_text, plotly_chart
from explorer.views.decoder import (
    DECODER_MODELS,
    Example,
    architecture_rows,
    decoding_run,
    step_counts,
    step_timings,
)

text = functools.partial(lesson_text, "decoder")


def _judged(tokens, right) -> list[bool | None]:
    return [None if right is None else t == r for t, r in zip(tokens, right or tokens, strict=False)]


def forcing_section(ex: Example, mistake: int | None, lesson: Lesson) -> None:
    """Free running against teacher forcing on the same input, a mistake put in at one step."""
    st.divider()
    st.subheader("2 · Teacher forcing: training without the loop", anchor="forcing")
    st.markdown(text("forcing: intro"))
    free = decoding_run(ex.task, ex.tokens, False, mistake)
    right = ex.expected
    steps = [f"step {k + 1}" for k in range(free.n_steps)]
    reads_right = None if right is None else (free.keys[0] if ex.start is not None else ex.tokens[-1],
                                              *right[:-1])
    rows = [("free running reads", free.queries, _judged(free.queries, reads_right)),
            ("free running writes", free.written, _judged(free.written, right))]
    if right is None:
        st.info(text("forcing: no teacher"), icon=":material/info:")
    else:
        forced = decoding_run(ex.task, ex.tokens, True, mistake)
        rows += [("teacher forcing reads", forced.queries, _judged(forced.queries, reads_right)),
                 ("teacher forcing writes", forced.written, _judged(forced.written, right))]
    plotly_chart(figures.forcing_figure(rows, steps, mistake), key="forcing")
    lesson.explain(section="forcing")
    if mistake is None:
        st.caption(text("forcing: no mistake"))
    if right is None:
        return
    figure_col, text_col = st.columns([3, 2], gap="large")
    with figure_col:
        plotly_chart(figures.line_figure(
            np.arange(1, free.n_steps + 1), {"free running": free.losses, "teacher forcing": forced.losses},
            x_title="step", y_title="loss −ln p(right token)", dashes={"teacher forcing": "dash"},
            marker_x=None if mistake is None else mistake + 1, title="Loss at each step"), key="forcing_loss")
    with text_col:
        st.markdown(text("forcing: loss"))
        if mistake is not None:
            later = slice(mistake + 1, None)
            wrong_after = sum(w != r for w, r in zip(free.written[later], right[later], strict=True))
            st.markdown(
                f"The mistake at step {mistake + 1}: `{free.written[mistake]}` instead of `{right[mistake]}`. "
                f"After it, free running writes **{wrong_after} of {len(right[later])}** later tokens wrong "
                f"(loss summed over those steps {np.sum(free.losses[later]):.1f}); teacher forcing "
                f"{sum(w != r for w, r in zip(forced.greedy[later], right[later], strict=True))} "
                f"(loss {np.sum(forced.losses[later]):.1f}).")


def cache_section(ex: Example, step: int, n_layers: int, lesson: Lesson) -> None:
    """What each step recomputes without the cache and keeps with it; exact counts and measured time."""
    st.divider()
    st.subheader("3 · The KV cache: keep what does not change", anchor="cache")
    st.markdown(text("cache: intro"))
    seq2seq = ex.start is not None
    n_source = len(ex.ids) if seq2seq else 0
    k = step - 1
    position = k if seq2seq else len(ex.ids) - 1 + k
    new = len(ex.ids) if not seq2seq and k == 0 else 1
    plotly_chart(figures.cache_figure(n_layers, n_source, position, new), key="cache_grid")
    lesson.explain(section="cache")
    counts = step_counts(ex.task, len(ex.ids), ex.n_steps)
    timings = step_timings(ex.task)
    count_col, time_col = st.columns(2, gap="large")
    steps = np.arange(1, ex.n_steps + 1)
    with count_col:
        plotly_chart(figures.line_figure(
            steps, {"without the cache": counts.uncached, "with the cache": counts.cached}, x_title="step",
            y_title="multiplications", title="Multiplications per step (this example)", marker_x=step,
            dashes={"with the cache": "dash"}), key="cache_counts")
    with time_col:
        measured = np.arange(1, len(timings.uncached) + 1)
        plotly_chart(figures.line_figure(
            measured, {"without the cache": timings.uncached * 1000, "with the cache": timings.cached * 1000},
            x_title="step", y_title="milliseconds", title=f"Measured time per step (longest input, "
                                                         f"{len(measured)} steps)", dashes={"with the cache": "dash"}),
            key="cache_times")
    training = counts.uncached[-1]  # a teacher-forced pass over the whole output: the last uncached step
    numbers = "cache: numbers" if seq2seq else "cache: numbers, decoder-only"
    st.markdown(text(numbers, step=step, uncached=counts.uncached[k], cached=counts.cached[k],
                     ratio=counts.uncached[k] / counts.cached[k], uncached_total=sum(counts.uncached),
                     cached_total=sum(counts.cached) + counts.setup, setup=counts.setup, training=training))
    st.markdown(text("cache: timing", runs=timings.runs, uncached_ms=float(np.mean(timings.uncached)) * 1000,
                     cached_ms=float(np.mean(timings.cached)) * 1000, steps=len(timings.uncached),
                     setup_sentence=f"; the cache's setup takes {timings.setup * 1000:.2f} ms once" if seq2seq else ""))
    st.caption(f"Counts: explorer.generation_step_cost and cache_setup_cost for `{DECODER_MODELS[ex.task]}`, "
               "checked against PyTorch's FLOP counter in the tests. Times: explorer.views.decoder.step_timings, "
               "measured once per model while the server runs.")


@st.fragment
def architecture_section(controls: UrlControls, lesson: Lesson, widths: list[int], vocabularies: list[int]) -> None:
    """The three architectures' blocks, and their parameters counted on the built models.  Its three
    controls are beside it, in a fragment: they rerun (and resend) this section only."""
    st.divider()
    st.subheader("4 · Encoder-only, decoder-only, encoder–decoder", anchor="architectures")
    width_col, layers_col, vocab_col = st.columns(3, gap="large")
    d_model = controls.select_slider("Width d_model", widths, 64, "arch_d", where=width_col)
    n_layers = controls.slider("Layers per stack", 1, 12, 2, 1, "arch_layers", where=layers_col)
    vocab = controls.select_slider("Vocabulary", vocabularies, 19, "arch_vocab", where=vocab_col,
                                   help="19 is the reverse and sort models' vocabulary; 32 000–50 000 is a "
                                        "real language model's.")
    st.markdown(text("architectures: intro"))
    plotly_chart(figures.architecture_figure(n_layers), key="architectures")
    lesson.explain(section="architectures")
    rows = architecture_rows(d_model, n_layers, vocab)
    by_name = {row.name: row for row in rows}
    both, decoder = by_name["encoder–decoder"], by_name["decoder-only"]
    deep = by_name["decoder-only, twice as deep"]
    table = pd.DataFrame({
        "architecture": [r.name for r in rows], "layers": [r.layers for r in rows],
        "attention (encoder | decoder)": [r.blocks for r in rows], "parameters": [r.parameters for r in rows],
        "in the layers": [r.in_layers for r in rows], "embeddings and output": [r.in_embeddings for r in rows],
        "share of encoder–decoder": [r.parameters / both.parameters for r in rows],
    })
    st.dataframe(table, hide_index=True, column_config={
        "share of encoder–decoder": st.column_config.NumberColumn(format="percent"),
        **{c: st.column_config.NumberColumn(format="localized") for c in
           ("parameters", "in the layers", "embeddings and output")},
    })
    st.markdown(text("architectures: half", n_layers=n_layers, decoder=decoder.parameters, both=both.parameters,
                     share=decoder.parameters / both.parameters, layer_share=decoder.in_layers / both.in_layers,
                     decoder_embed=decoder.in_embeddings, both_embed=both.in_embeddings,
                     deep_share=deep.parameters / both.parameters))
    st.caption(f"d_model = {d_model}, feed-forward 4·d_model, vocabulary {vocab:,}, pre-norm (as the shipped "
               "models), sinusoidal positions (no parameters), separate input and output embeddings; counted with "
               "explorer.count_parameters on models built without memory (PyTorch's meta device).")
