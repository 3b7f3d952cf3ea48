"""Lesson: self-attention, masking and multi-head attention, live."""

import streamlit as st

from explorer.figures.common import matrix_csv
from explorer.kit.draw import Section, download_csv, escape_markdown, lesson_text, plotly_chart, presenting
from explorer.lessons.attention.spec import ATTENTION, ATTENTION_COMPARE
from explorer.serve.adapter import serve_lesson
from explorer.training.tasks import get_task

RIGHT, WRONG = ":green[:material/check_circle: correct]", ":red[:material/cancel: wrong]"


def answer(view) -> None:
    """What ran, the input and the model's answer, with a verdict where the input was read whole."""
    run, tokens, expected = view.run, list(view.tokens), view.expected
    if view.problems:  # they quote what the user typed: shown as literal text
        st.warning("\n".join(f"- {escape_markdown(p)}." for p in view.problems), icon=":material/warning:")
    if run.failure:
        st.error(f"{run.failure}\n\nShowing random weights instead.", icon=":material/error:")
    st.caption(f"Running {run.label}.")
    left, right = st.columns(2)
    left.markdown(f"**Input** &nbsp; `{' '.join(run.attention.input_tokens)}`")
    output = run.attention.output_tokens
    no_verdict = " — no verdict: part of the input could not be read" if view.problems else ""
    architecture = get_task(view.settings.task).architecture
    if architecture == "encoder-decoder":
        verdict = no_verdict if expected is None else f" {RIGHT}" if tuple(output) == expected else f" {WRONG}"
        right.markdown(f"**{run.attention.output_title}** &nbsp; `{' '.join(output)}`{verdict}")
    elif view.settings.task == "coreference":
        if "it" in run.attention.input_tokens:
            guess = output[run.attention.input_tokens.index("it")]
            verdict = (f" {RIGHT}" if (guess,) == expected else f" {WRONG} (should be {expected[0]})") \
                if expected is not None else (no_verdict or " — no verdict: this sentence is not of the form the "
                                              "model was trained on (the ANIMAL didn't VERB the NOUN because it "
                                              "was too ADJECTIVE)")
            right.markdown(f"**“it” points to** &nbsp; `{guess}`{verdict}")
    else:
        right.markdown(f"**{run.attention.output_title}** &nbsp; `{' '.join(output[:len(tokens)])}`")
        if expected:
            right.caption(f"At '?', the right answer is {expected[0]}: the model says {output[len(tokens) - 1]}.")


def grid(shown) -> None:
    """The key figure: the enlarged head large, as a heatmap and as lines; under it every head (of every
    layer, or of the enlarged layer), the enlarged one framed, and what to notice."""
    view, figures, settings = shown.view, shown.figures, shown.settings
    answer(view)
    row = view.focus_row
    asking = f" · the row of “{view.attention.query_tokens[row]}”" if row is not None else ""
    st.subheader(f"{view.attention.title}: layer {settings.layer}, head {settings.head}{asking}")
    heat_col, lines_col = st.columns([3, 2], gap="medium")
    plotly_chart(figures.head, where=heat_col, key="head_large")
    heat_col.caption("Rows: the token asking (query). Columns: the token looked at (key).")
    plotly_chart(figures.lines, where=lines_col, key="head_lines", phone_fits=True)
    if row is None:
        lines_col.caption(f"Head {settings.head} as lines: each query (left) to the keys it reads (right); the "
                          "thicker and darker, the more weight.")
    else:
        lines_col.caption(f"The row of “{view.attention.query_tokens[row]}” in every head of layer {settings.layer}, "
                          "one colour a head: the thicker, the more weight; weights of 0.10 or more are printed "
                          "beside their key.")
    paged = presenting() or figures.grid is None  # one layer's heads at a time, readable
    where = f"layer {settings.layer} of {settings.layers}" if paged else "every layer"
    st.markdown(f"**Every head of {where}**, the large one framed: *Enlarge layer* and *Enlarge head* choose it.")
    grid_col, text_col = st.columns([3, 1], gap="large")
    plotly_chart(figures.layer_grid if paged else figures.grid, where=grid_col, key="grid")
    with text_col:
        st.markdown(lesson_text("attention", "reading"))
        for section, fields in view.notices:
            st.markdown(lesson_text("attention", section, **fields))
        if view.watch:
            st.caption(view.watch)


def head(shown) -> None:
    """The enlarged head, from scores to weights."""
    view, settings = shown.view, shown.settings
    block, layer, number = view.attention, settings.layer, settings.head
    st.subheader(f"Layer {layer}, head {number}: from scores to weights")
    plotly_chart(shown.figures.pipeline, key="pipeline")
    st.markdown(lesson_text("attention", "pipeline", head_dim=view.run.attention.head_dim))
    name = settings.block if get_task(settings.task).architecture == "encoder-decoder" else "encoder"
    download_csv(f"attention_{settings.task}_{name}_L{layer}_H{number}.csv", "Download this head's weights (CSV)",
                 matrix_csv, block.weights[layer - 1, number - 1], block.query_tokens, block.key_tokens,
                 corner="query \\ key")


def compare(shown) -> None:
    """This view's enlarged head against the same head at another setting."""
    view, figures = shown.view, shown.figures
    if view.other is None:
        return
    where = "Middle" if figures.difference is not None else "Right"  # the difference map, if drawn, is right
    st.markdown(f"Left: this view. {where}: {view.other_label}, mask {view.other_mask}. "
                f"Answer: `{' '.join(view.other_answer)}`.")
    cols = st.columns(3 if figures.difference is not None else 2)
    plotly_chart(figures.this, where=cols[0], key="compare_a")
    plotly_chart(figures.other, where=cols[1], key="compare_b")
    if figures.difference is not None:
        plotly_chart(figures.difference, where=cols[2], key="compare_diff")
    else:
        st.caption("The two views have different sequence lengths, so no difference map is drawn.")


serve_lesson(
    ATTENTION,
    lead="Every token asks a question (its query) of every token it may see (their keys) and takes a "
    "weighted mix of their values. Below, one head of one layer is drawn large: row = the token asking, "
    "column = the token looked at, colour = how much weight it gets; beside it, the same weights as lines; "
    "under them, every head small. The models are "
    "small transformers trained on toy tasks, so their attention has a job to do.",
    sidebar="Model and input",
    sections=[Section("grid", grid), Section("head", head),
              Section("compare", compare, part=ATTENTION_COMPARE, title="Compare this head with another setting")],
    working=lambda s: f"Running the {s.task} model…",
)
