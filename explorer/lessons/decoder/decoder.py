"""Lesson: the decoder at work — generation step by step, teacher forcing, the KV cache, and the
three architectures."""

import functools

import streamlit as st

from explorer.kit.draw import Section, escape_markdown, lesson_text, plotly_chart
from explorer.lessons.decoder.claims import PAPER_BASE_MILLIONS, one_table
from explorer.lessons.decoder.models import DECODER_MODELS
from explorer.lessons.decoder.spec import DECODER, DECODER_ARCHITECTURES, DECODER_CACHE
from explorer.lessons.decoder.view import (
    count_claim,
    mistake_claim,
    mistake_effect,
    parallel_claim,
    timing_claim,
    wider_claim,
)
from explorer.serve.adapter import serve_lesson
from explorer.training.tasks import get_task

text = functools.partial(lesson_text, "decoder")
ARCHITECTURES = {"encoder-decoder": "an encoder–decoder", "decoder": "decoder-only"}


def stepping(shown) -> None:
    """1 · The key figure: what the model reads and writes at this step."""
    view, settings = shown.view, shown.settings
    task = get_task(settings.task)
    seq2seq = task.architecture == "encoder-decoder"
    if view.problems:
        st.warning("\n".join(f"- {escape_markdown(problem)}." for problem in view.problems), icon=":material/warning:")
    if view.error:
        st.error(f"{view.error}\n\nThe decoding sections need this model; the architectures below do not.",
                 icon=":material/error:")
        return
    run, k, claim = view.run, view.step, mistake_claim(view)
    written = run.written[k]
    if claim is None:
        writes = f"writes **`{written}`** (p = {run.probs[k, run.vocab.index(written)]:.2f})"
        orange = "its choice in orange"
    else:
        writes = (f"is made to write **`{claim['written']}`**, a wrong token put in: its own choice was "
                  f"`{claim['own']}` (p = {claim['own_p']:.2f})")
        orange = f"the wrong token it is made to write in orange (its own choice: `{claim['own']}`)"
    source, so_far = "Source" if seq2seq else "Prompt", " ".join(run.written[:k]) or "(nothing yet)"
    st.markdown(f"`{DECODER_MODELS[settings.task]}` ({ARCHITECTURES[task.architecture]}) · **{source}** "
                f"`{' '.join(view.example.tokens)}` → **written so far** `{so_far}` · step {k + 1} reads "
                f"`{run.queries[k]}` and {writes}")
    plotly_chart(shown.figures.step, key="step_figure")
    cross = text("step: cross" if seq2seq else "step: no cross")
    st.caption(text("step: reading", orange=orange, cross_sentence=cross, middle="Middle" if seq2seq else "Right"))


def forcing(shown) -> None:
    """2 · Free running against teacher forcing on the same input, a mistake put in at one step."""
    view, figures = shown.view, shown.figures
    if view.run is None:
        return
    if view.forced is None:
        st.info(text("forcing: no teacher"), icon=":material/info:")
    plotly_chart(figures.forcing, key="forcing")  # the figure first: a step about it shows it on the first screen
    st.markdown(text("forcing: intro"))
    parallel = parallel_claim(view)
    if parallel is not None:  # one pass gives every step's loss: computed here, shown only where it holds
        st.markdown(text("forcing: parallel", **parallel))
    st.markdown(text("forcing: not the notes' reason"))
    effect = mistake_effect(view)
    if view.settings.put_in is None:
        st.caption(text("forcing: no mistake"))
    if figures.loss is None:
        return
    figure_col, text_col = st.columns([3, 2], gap="large")
    plotly_chart(figures.loss, where=figure_col, key="forcing_loss")
    text_col.markdown(text("forcing: loss"))
    if effect is not None:
        text_col.markdown(text("forcing: mistake", **effect))


def cache(shown) -> None:
    """3 · What each step recomputes without the cache and keeps with it: exact counts, and the
    stopwatch across lengths with the sentence it supports."""
    view, figures = shown.view, shown.figures
    if view.error:
        st.caption("The counts need the model's files (see above).")
        return
    plotly_chart(figures.grid, key="cache_grid")
    st.markdown(text("cache: intro"))
    count_col, time_col = st.columns(2, gap="large")
    plotly_chart(figures.counts, where=count_col, key="cache_counts")
    name, values = count_claim(view)
    count_col.markdown(text(name, **values))
    count_col.caption(f"Counts: explorer.generation_step_cost and cache_setup_cost for "
                      f"`{DECODER_MODELS[shown.settings.task]}`, checked against PyTorch's FLOP counter in the tests.")
    own, wider = view.sweeps
    plotly_chart(figures.sweep, where=time_col, key="cache_times")
    name, values = timing_claim(own, view.length)
    time_col.markdown(text(name, wider=wider_claim(wider), **values))
    time_col.caption(text("timing: how", repeats=own.repeats))


def architectures(shown) -> None:
    """4 · The three architectures' blocks, and their parameters counted on the built models."""
    view, settings = shown.view, shown.settings
    plotly_chart(shown.figures.blocks, key="architectures", phone_layout=False)
    st.markdown(text("architectures: intro"))
    # A table, not a data grid: its headers wrap, so all seven columns fit a projector's width.
    st.table(shown.figures.table.style.format({"share of encoder–decoder": "{:.0%}", **{
        c: "{:,}" for c in ("parameters", "in the layers", "embeddings and output")}}).set_uuid("architectures"),
        hide_index=True)  # a fixed uuid: pandas draws a random one per Styler, changing the bytes every run
    both, decoder = view.row("encoder–decoder"), view.row("decoder-only")
    deep = view.row("decoder-only, twice as deep")
    st.markdown(text("architectures: half", n_layers=settings.n_layers, decoder=decoder.parameters,
                     both=both.parameters, share=decoder.parameters / both.parameters,
                     layer_share=decoder.in_layers / both.in_layers, decoder_embed=decoder.in_embeddings,
                     both_embed=both.in_embeddings, deep_share=deep.parameters / both.parameters,
                     per_decoder=decoder.in_layers / (settings.n_layers * settings.d_model ** 2),
                     per_both=both.in_layers / (settings.n_layers * settings.d_model ** 2),
                     shared=one_table(both.parameters, settings.vocab, settings.d_model),
                     paper=original_size(settings)))
    # No "pre-norm": its name (and Add & Norm) come with the depth lesson; said here in words.
    st.caption(f"d_model = {settings.d_model}, feed-forward 4·d_model, vocabulary {settings.vocab:,}, a LayerNorm "
               "(it rescales each token's d numbers to mean 0 and spread 1, then a learned scale and shift: 2·d "
               "parameters) before each "
               "attention and feed-forward block, as in the shipped models, sinusoidal positions (no parameters), "
               "separate input and output embeddings; counted with explorer.count_parameters on models built "
               "without memory (PyTorch's meta device).")


def original_size(settings) -> str:
    """At the original Transformer's base size (d = 512, 6 + 6 layers), what its paper counts."""
    if (settings.d_model, settings.n_layers) != (512, 6):
        return ""
    return f" (its paper, at d = 512 and 6 + 6 layers: {PAPER_BASE_MILLIONS} million)"


serve_lesson(
    DECODER,
    lead=text("lead"),
    sidebar="Model and input",
    sections=[
        Section("stepping", stepping),
        Section("forcing", forcing, title="2 · Teacher forcing: training without the loop"),
        Section("cache", cache, part=DECODER_CACHE, title="3 · The KV cache: keep what does not change"),
        Section("architectures", architectures, part=DECODER_ARCHITECTURES,
                title="4 · Encoder-only, decoder-only, encoder–decoder"),
    ],
    working=lambda s: f"Decoding with `{DECODER_MODELS[s.task]}`…",
)
