"""Section 4 of the gradient-flow lesson (app_pages/gradients.py): the four shipped recall models,
accuracy against the distance a letter must be carried; not a page of its own."""

import pandas as pd
import streamlit as st

from explorer.figures import gradients as figures
from explorer.figures.common import frame_csv
from explorer.training.pretrained import PretrainedModelError, load_model
from explorer.training.tasks import RecallTask
from explorer.ui import altair_chart, download_csv, vega_lite_spec
from explorer.views.gradients import (
    LEARNING_STEPS,
    RECALL_MODELS,
    accuracy_bands,
    binned_accuracy,
    recall_accuracy,
    recall_learning,
)


@st.cache_resource(show_spinner=False, max_entries=4)
def recall_views(available: tuple[str, ...], chance: float) -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    """The recall chart's spec (its data ready to send), the accuracy per band and the per-distance
    frame: they depend only on the shipped models, so they are made once per process (~120 ms),
    shared by every session and never changed."""
    results = [(RECALL_MODELS[name], recall_accuracy(name)) for name in available]
    recall = figures.recall_frame(results, binned=binned_accuracy)
    spec = vega_lite_spec(figures.recall_chart(recall, chance=chance))
    return spec, figures.recall_bands(results, bands=accuracy_bands), recall


# --- 4. trained models -----------------------------------------------------------------------------------
def recall_section() -> None:
    """Section 4: the four shipped recall models, accuracy against distance."""
    st.subheader("4 · Trained networks: remembering across a gap")
    task = RecallTask()
    results, missing = [], []
    with st.spinner(f"Evaluating the four shipped recall models on {task.eval_size} held-out examples "
                    "(once per server, a few seconds)…"):
        for name, label in RECALL_MODELS.items():
            try:
                results.append((label, recall_accuracy(name)))
            except PretrainedModelError as problem:
                missing.append(f"**{label}** (`{name}`): {problem}")
    if missing:
        st.warning("Some trained models are not available, so they are left out:\n\n"
                   + "\n".join(f"- {line}" for line in missing), icon=":material/hourglass_empty:")
    if results:
        chance = 1 / len(task.keys)
        chart_col, text_col = st.columns([3, 2], gap="large")
        with chart_col:
            available = tuple(name for name, label in RECALL_MODELS.items() if label in {r[0] for r in results})
            spec, bands, recall = recall_views(available, chance)
            altair_chart(spec, key="recall_chart")
            st.markdown("**Accuracy over ranges of distance**")
            st.dataframe(bands, column_config={c: st.column_config.NumberColumn(c, format="percent")
                                               for c in bands.columns})
            download_csv("recall_accuracy_by_distance.csv", "Download accuracy by distance (CSV)", frame_csv,
                         recall, key="recall_csv")
        examples = int(results[0][1].examples.sum())
        near_band, far_band = bands.columns[0], bands.columns[-1]

        def at(band: str) -> str:
            return ", ".join(f"{label} {bands.loc[label, band]:.0%}" for label in bands.index)

        loops = [label for label in bands.index if label != RECALL_MODELS["recall-sinusoidal-h4-l2"]]
        faded = [label for label in loops if bands.loc[label, far_band] < 2 * chance]
        held = [f"the {label} still answers {bands.loc[label, far_band]:.0%} there"
                for label in loops if label not in faded]
        reach = (f"the {' and the '.join(faded)} {'is' if len(faded) == 1 else 'are'} within twice chance at "
                 f"{far_band}" if faded else f"none of the loops is within twice chance at {far_band}")
        reach = "; ".join([reach, *held])
        cards = [load_model(name).card for name in available]
        steps = sorted({card["steps"] for card in cards})
        text_col.markdown(
            f"""
    The task: *{task.description.rstrip(".").lower()}.* Each model reads a letter, then a gap of other
    letters, then '?', and must answer with the first letter; the *distance* is how far back that
    letter is. All four learned from the same examples for the same {" / ".join(map(str, steps))} steps, and
    those hold only short gaps: two thirds are a single letter, one in 6561 is longer than 8. They are
    then tested on every distance from 1 to {task.max_distance} equally often ({examples} examples,
    {examples // task.max_distance} per distance, measured when the page first needs them). Points are the
    accuracy at each distance, the lines the accuracy over bins of 8 distances. Chance is 1 in {len(task.keys)}.

    **At distances {near_band}:** {at(near_band)}. **At {far_band}:** {at(far_band)}.

    Attention answers as well far away as near: from the '?' it reads the first position in one step,
    whatever lies between, so what it learned on gaps of mostly one or two letters works at any distance. A
    loop has to carry the letter through every letter of the gap, each one written into the same
    state; nothing in training asked it to hold on for more than a few steps, and how far its memory
    reaches differs by model: {reach}.

    This measures how far what was learned reaches, not the most a loop can learn: trained longer and
    with gaps up to 128 as well, loops of these kinds (with a state of 64) all learned to carry one
    letter across every one of those gaps (`pretrained/recall-experiments.md`). The table below, from
    each model's training record, gives the accuracy by distance after {", ".join(map(str, LEARNING_STEPS))}
    training steps.
    """
        )
        learning = {(RECALL_MODELS[name], step): row for name in available
                    for step, row in recall_learning(name).items()}
        if learning:
            table = pd.DataFrame.from_dict(learning, orient="index").rename_axis(["model", "after step"])
            text_col.dataframe(table, column_config={c: st.column_config.NumberColumn(c, format="percent")
                                                     for c in table.columns})
