"""Lesson: train it live — watch attention form, and race a recurrent network.

The lesson runtime trains the run on the server and shows the session's moment of it
(explorer/serve/live.py); this page draws that moment.  The prose is in lessons/train.md."""

import functools
import math

import numpy as np
import streamlit as st

from explorer.kit.draw import Section, lesson_text, plotly_chart
from explorer.lessons.train.spec import TRAIN
from explorer.lessons.train.view import RACE_TASKS, score_gap
from explorer.serve.adapter import serve_lesson
from explorer.training.runs import default_manager

text = functools.partial(lesson_text, "train")


def status(view) -> None:
    """The progress bar of a run being watched."""
    if view.state == "queued":
        st.progress(0.0, text=text("queued", position=view.position, slots=default_manager().slots))
        return
    latest = [shown[-1] for shown in view.snapshots]
    if max(s.step for s in latest) == 0:
        st.progress(0.0, text=text("starting"))
    elif view.job.race_seconds is not None:
        st.progress(view.fraction(), text=text("racing", seconds=min(s.training_seconds for s in latest),
                                               total=view.job.race_seconds))
    else:
        st.progress(view.fraction(), text=text("training", step=latest[0].step, steps=view.job.runners[0].steps,
                                               seconds=latest[0].seconds))


def moment(view) -> str:
    """The line above the grid: the step, held-out accuracy and loss (against the rival's in a race)."""
    snapshot = view.snapshot
    if view.job.race_seconds is None:
        return (text("moment", step=snapshot.step, accuracy=100 * snapshot.accuracy, loss=snapshot.loss)
                + (text("moment seconds", seconds=snapshot.seconds) if snapshot.step else ""))
    # The recurrent runner at the same seconds of training as the transformer's snapshot.
    rival = [s for s in view.snapshots[1] if s.training_seconds <= snapshot.training_seconds] or view.snapshots[1][:1]
    return text("moment race", seconds=snapshot.training_seconds, step=snapshot.step, accuracy=100 * snapshot.accuracy,
                rival=view.job.runners[1].model.upper(), rival_step=rival[-1].step,
                rival_accuracy=100 * rival[-1].accuracy)


def at_step_zero(view) -> str:
    """What the untrained model's numbers say: its loss against an even guess, and (for cross-attention
    over the input letters) how evenly its attention is spread."""
    start = view.start
    lines = [text(f"start loss: {start.direction}", loss=start.loss, vocab=start.vocab, even=start.even,
                  answers=start.answers, even_answers=math.log(start.answers))]
    if view.job.runners[0].task in RACE_TASKS:
        weights = view.snapshot.attention
        lines.append(text("start spread", low=float(np.min(weights)), high=float(np.max(weights)),
                          keys=len(view.keys), even=1 / len(view.keys), gap=score_gap(weights)))
    return "\n\n".join(lines)


def run(shown) -> None:
    """The key section, at the moment of the session's run: progress, the probe's attention, the curves
    (a race: its curves first, then the transformer's attention)."""
    view, figures, settings = shown.view, shown.figures, shown.settings
    if view.live:
        status(view)
    elif view.state == "untrained":
        st.caption(text("untrained race" if settings.race else "untrained"))
    if view.state in ("cancelled", "failed") or view.message:
        st.info(text("ended", message=view.message or view.state), icon=":material/info:")
    st.markdown(moment(view))
    if settings.race:  # the race is what the line above and a step's answer speak of: its curves first
        plotly_chart(figures.race, key="train_race")
    plotly_chart(figures.grid, key="train_grid")
    if settings.task in RACE_TASKS:
        layer, head, sharp = view.sharpness()
        st.markdown(text("sharpness", layer=layer, head=head, sharp=sharp, even=1 / len(view.keys)))
    if view.snapshot.step == 0:
        st.markdown(at_step_zero(view))
    if not settings.race:
        plotly_chart(figures.curves, key="train_curves")


def what(shown) -> None:
    """How to read it, and how the server shares runs."""
    task = shown.settings.task
    st.markdown("\n\n".join([
        text("what", architecture="cross-attention of the decoder (output letters, rows) over the encoder "
             "(input letters, columns)" if task in RACE_TASKS else "self-attention of the sequence over itself"),
        *([text("what: reverse")] if task == "reverse" else []),  # the anti-diagonal line of reversing
        *([text("what: race")] if task in RACE_TASKS else [])]))
    manager = default_manager()
    with st.expander("How a run is shared and bounded on this server"):
        st.markdown(text("server", slots=manager.slots, queue=manager.max_queue, abandon=manager.abandon_after))


serve_lesson(
    TRAIN,
    lead=text("lead"),
    sidebar="Model and task",
    sections=[Section("run", run), Section("what", what)],
    working=lambda s: "Building the untrained model…",
)
