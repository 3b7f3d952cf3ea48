"""Lesson: train it live — watch attention form, and race a recurrent network.

The controls and the frame are here; what is drawn while a run trains (a fragment that polls the
server's training manager) and after it (the scrubber) is in train_live.py.  The prose is in
lessons/train.md."""

import functools

import streamlit as st

from app_pages.train_live import TrainPanel
from explorer.model.positional import ENCODINGS
from explorer.serve.page import lesson_page, next_lesson
from explorer.training.live import LIVE_TASKS, LiveSettings
from explorer.training.runs import LiveJob
from explorer.ui import escape_markdown, lesson_text

text = functools.partial(lesson_text, "train")
MODES = {"train": "the transformer alone", "race": "against a GRU, for the same seconds"}
RACE_TASKS = ("reverse", "sort")

controls, lesson = lesson_page("train", "Train it live", text("lead"))
side = st.sidebar
side.header("Model and task")
task = controls.selectbox("Task", LIVE_TASKS, 0, "task", where=side,
                          help="Reverse or sort up to 6 letters (encoder–decoder: the grid is cross-attention), "
                               "continue a repeated sequence (induction) or resolve “it” (coreference): the grid "
                               "is then self-attention.")
encoding = controls.selectbox("Positional encoding", ENCODINGS, 0, "encoding", where=side,
                              help="How the model learns where each token is; “none” gives it no positions at all.")
heads = controls.select_slider("Heads per layer", [1, 2, 4], 2, "heads", where=side)
layers = controls.slider("Layers", 1, 3, 2, 1, "layers", where=side)
seed = controls.slider("Seed", 0, 20, 0, 1, "seed", where=side,
                       help="Draws the initial weights and the training batches: the same seed, the same run.")
mode = controls.radio("Mode", list(MODES), 0, "mode", where=side, captions=list(MODES.values()),
                      help="A race trains a GRU encoder–decoder with about as many parameters on the same "
                           "batches, taking turns with the transformer, each for the same seconds of training.")
race_seconds, steps = None, 800
if mode == "train":
    steps = controls.select_slider("Training steps", [200, 400, 800, 1200, 1600], 800, "steps", where=side,
                                   help="Batches of 64 examples; the learning rate warms up, then decays to zero.")
else:
    race_seconds = controls.select_slider("Seconds of training each", [5, 10, 15, 20], 10, "race_seconds",
                                          where=side)
    if task not in RACE_TASKS:
        controls.note(f"the recurrent baseline is an encoder–decoder, so it races on reverse or sort only; "
                      f"{escape_markdown(task)} trains the transformer alone.", about="Mode")
        race_seconds = None
controls.report()

settings = LiveSettings(task=task, encoding=encoding, n_heads=heads, n_layers=layers, seed=seed, steps=steps)
job = LiveJob.single(settings) if race_seconds is None else LiveJob.race(settings, race_seconds)
if not lesson.revealed:
    st.stop()

panel = TrainPanel(job, lesson)
panel.show()

st.markdown(text("what", architecture="cross-attention of the decoder (output letters, rows) over the encoder "
                 "(input letters, columns)" if task in RACE_TASKS else "self-attention of the sequence over itself"))
with st.expander("How a run is shared and bounded on this server"):
    st.markdown(text("server", slots=panel.manager.slots, queue=panel.manager.max_queue,
                     abandon=panel.manager.abandon_after))
next_lesson("train")
