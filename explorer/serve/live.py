"""Live training, served: the key section of a lesson that trains on the server (`LessonSpec.live`).

A page never trains.  Its start button asks the server's training manager (explorer.training.runs)
for the lesson's job — equal jobs share one run, a client has its share, more wait in the queue —
and the runtime shows the session's run:

    no run watched    step 0 of the session's own settings (the lesson's view, `view(settings)`)
    queued, training  a fragment (`st.fragment(run_every=...)`, public API) polls the manager at its
    or replayed       pace and draws the key section at the moment reached: snapshots appear at the
                      pace they were computed, so a run that finished before the session asked is
                      replayed from step 0, and every session sees it form
    finished          a scrubber replays any snapshot

A lesson step's answer about the run (a claim that is `ready` once the run is done) is judged at
the finished run's moment; until then it says it waits for the run (the prose's "answer waits").
Revealing such a step starts its run, as the start button would (a lecturer's clicker can reveal
but not press a button).  Moving on during the run is never held up: the run left behind is let go
when the session asks for another, or after `abandon_after` seconds unpolled (explorer/training/runs.py).

At every moment the lesson's own `at(view, run, index)` gives its view and the section draws it;
the figures of a moment are made once for every session at the same point of the same run
(runtime.shown_at).  The notes (queue full, client busy, the run gone) are sections of the lesson's
prose, explorer/lessons/<page>/prose.md.  Session state: `_<page>_watch` (the job watched and when the
session pressed start), `_<page>_scrub` (the scrubber), `_<page>_note` (a note for the next run).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

import streamlit as st

from ..kit.prose import lesson_text
from ..training.runs import ClientBusy, QueueFull, RunView, default_manager
from . import runtime
from .client import client_address
from .page import session_key

__all__ = ["ENDED", "reached", "repace", "serve_live"]

ENDED = ("cancelled", "failed")


def reached(run: RunView, watched_for: float) -> tuple[RunView, bool]:
    """The part of `run` a session that has watched it for `watched_for` seconds is shown: the
    snapshots that arrived by then (so a run that finished before the session asked is replayed at
    the pace it was computed), and whether that is all of a finished run."""
    shown = tuple(tuple(s for s, arrived in zip(snapshots, times, strict=True) if arrived <= watched_for)
                  for snapshots, times in zip(run.snapshots, run.arrived, strict=True))
    arrived = tuple(times[: len(s)] for s, times in zip(shown, run.arrived, strict=True))
    complete = not run.active and all(len(a) == len(b) for a, b in zip(shown, run.snapshots, strict=True))
    return dataclasses.replace(run, snapshots=shown, arrived=arrived), complete


def repace(interval: float, wanted: float) -> bool:
    """Whether a page polling every `interval` seconds should rerun to poll every `wanted` seconds
    instead (a fragment's pace is set by a whole-page run, dearer than a poll): when a class has
    joined and the pace should slow by half again or more (the polls saved pay for the page run in a
    few seconds).  Never to speed up: a session keeps the slower pace to the end of its run (a few
    seconds between frames, still a live view), and no page reruns when a class leaves at once."""
    return wanted >= 1.5 * interval


class _Live:
    """One page run's view of the session's live job (see the module)."""

    def __init__(self, lesson, shown: runtime.Shown, draw: Callable, prepare: Callable, answer: Callable,
                 revealed: bool = False):
        self.lesson, self.shown, self.draw, self.prepare, self.answer = lesson, shown, draw, prepare, answer
        self.revealed = revealed  # a Reveal of a step about the run: it starts the run (see serve_live)
        self.job = lesson.live.job(shown.settings)
        self.manager, self.session = default_manager(), session_key()
        self.manager.ready()  # the training process starts while the visitor reads the page, not on the first press
        page = lesson.page
        self.watch, self.scrub, self.note = f"_{page}_watch", f"_{page}_scrub", f"_{page}_note"
        watched = st.session_state.get(self.watch)
        if watched is not None and watched[0] != self.job:  # the settings changed: let the old run go
            self.manager.release(self.session)
            st.session_state.pop(self.watch)

    def text(self, name: str, **fields) -> str:
        return lesson_text(self.lesson.page, name, **fields)

    def start(self) -> None:
        try:
            self.manager.request(self.session, self.job, client_address())
            st.session_state[self.watch] = (self.job, time.monotonic())
        except QueueFull:
            st.session_state[self.note] = self.text("queue full", queue=self.manager.max_queue)
        except ClientBusy:
            st.session_state[self.note] = self.text("client busy", runs=self.manager.per_client)
        except ValueError as problem:  # beyond the server's caps (the controls do not allow it)
            st.session_state[self.note] = str(problem)

    def stop(self) -> None:
        self.manager.release(self.session)
        st.session_state.pop(self.watch, None)

    def buttons(self, watching: bool):
        """The start and Stop buttons in a row; the rest of the row (returned) holds a note, if any,
        else the replay scrubber of a finished run (so the figure keeps its place on the first screen)."""
        page = self.lesson.page
        start, stop, note = st.columns([2, 2, 7], vertical_alignment="center")
        start.button(self.lesson.live.start(self.shown.settings), icon=":material/play_arrow:", type="primary",
                     on_click=self.start, key=f"{page}_start", disabled=watching, width="stretch")
        stop.button("Stop", icon=":material/stop:", on_click=self.stop, key=f"{page}_stop", disabled=not watching,
                    width="stretch")
        if message := st.session_state.pop(self.note, None):
            note.warning(message, icon=":material/hourglass_top:")
            return st.container()
        return note

    def answered(self, shown: runtime.Shown, watching: bool = False) -> None:
        """The step's answer, judged at `shown` (never inside the polling fragment: the answer stands
        above it, outside the fragment); while it waits for a run being `watching`, it does not ask for
        the start button."""
        waiting = self.text("answer waits")
        if not watching:
            waiting += " " + self.text("answer waits: start", start=self.lesson.live.start(self.shown.settings))
        self.answer(shown, waiting=waiting)

    def at(self, run: RunView | None, index: int | None) -> runtime.Shown:
        """Draw the key section at this moment of the run (None: no run, step 0); what was drawn."""
        if run is None and index is None:
            self.draw(self.shown)
            return self.shown
        view = self.lesson.live.at(self.shown.view, run, index)
        key = (self.job, None if run is None else (run.state, tuple(map(len, run.snapshots)),
                                                    tuple(times[-1] if times else None for times in run.arrived)),
               index)
        shown = runtime.shown_at(self.lesson, self.shown.settings, key, view, self.prepare)
        self.draw(shown)
        return shown

    def serve(self) -> None:
        if self.revealed and st.session_state.get(self.watch) is None:
            self.start()  # as the start button would (a note says why where the server cannot take it)
        watched = st.session_state.get(self.watch)
        run = self.manager.poll(self.session, self.job) if watched is not None else None
        if watched is not None and run is None:
            st.session_state.pop(self.watch)
            st.session_state[self.note] = self.text("gone")
        if run is None:
            self.buttons(watching=False)
            self.answered(self.at(None, None))
            return
        shown, complete = reached(run, time.monotonic() - watched[1])
        if not complete and run.state not in ENDED:
            self.answered(self.shown, watching=True)  # waits for the run
            self.buttons(watching=True)
            self.poll(watched[1])
            return
        self.finished(shown, self.buttons(watching=False))

    def poll(self, since: float) -> None:
        interval = self.manager.poll_interval()

        @st.fragment(run_every=interval)
        def poll() -> None:
            run = self.manager.poll(self.session, self.job)
            if run is None:
                st.rerun()  # the run is gone: the page says so
            shown, complete = reached(run, time.monotonic() - since)
            if complete or run.state in ENDED:
                st.rerun()  # into the finished view
            if repace(interval, self.manager.poll_interval()):
                st.rerun()  # a class has joined: poll at the new pace (a page rerun, so rarely)
            self.at(shown, None)

        poll()

    def finished(self, run: RunView, where) -> None:
        """A run that has ended (or every snapshot of it shown): the scrubber (in `where`) replays any snapshot."""
        steps = [s.step for s in run.snapshots[0]]
        index = 0
        if len(steps) > 1:
            if st.session_state.get(self.scrub) not in steps:
                st.session_state[self.scrub] = steps[-1]
            # Its label beside it, not above it: the row stays as tall as its buttons, and the grid under
            # it ends on the first screen with its letters.
            label, where = where.columns([5, 8], vertical_alignment="center")
            label.markdown("Replay the run, step:", help="Every snapshot of the run, from the untrained model "
                           "to the last step.", width="stretch")
            chosen = where.select_slider("Replay the run: step", steps, key=self.scrub, label_visibility="collapsed")
            index = steps.index(chosen)
        self.answered(self.at(run, index))


def serve_live(lesson, shown: runtime.Shown, draw: Callable[[runtime.Shown], None], prepare: Callable,
               answer: Callable, start: bool = False) -> None:
    """Draw the key section of a live lesson (see the module): the buttons, then `draw(shown)` at the
    moment of the session's run that the session has reached (`prepare`: the runtime's conversion
    of figures to what is sent); `answer(shown, waiting=...)` writes the step's answer (steps.Lesson).
    `start`: this page run is a Reveal of a step whose answer is about the run, and starts it (or
    joins the run of the same job, in progress or finished) unless the session already watches it."""
    _Live(lesson, shown, draw, prepare, answer, revealed=start).serve()
