"""What the live-training page (app_pages/train.py) draws for a job; not a page of its own.

Training runs in the server's training manager (explorer.training.runs), never in this script.
While the session's run is queued, training or being replayed, a fragment polls the manager every
second or so and redraws the progress, the probe's attention grid and the curves; once every
snapshot is shown the whole page reruns into the finished view, where a scrubber replays them.
Before anyone presses Train the page shows the untrained model (step 0 of the same run)."""

import functools
import threading
import time
from collections import OrderedDict

import streamlit as st

from explorer.figures.common import frozen
from explorer.figures.train import Curve, attention_panels, race_figure, training_curves
from explorer.serve.page import session_key
from explorer.training.runs import ClientBusy, LiveJob, QueueFull, RunView, default_manager
from explorer.ui import lesson_text, plotly_chart
from explorer.ui.client import client_address
from explorer.views.train import Progress, columns, first_snapshots, probe_tokens, progress, repace

WATCH = "_train_watch"  # session state: (job, time.monotonic() when the session pressed Train)
SCRUB = "_train_scrub"  # the scrubber's step
NOTE = "_train_note"  # a message for the next run (the queue was full, the run was stopped)
text = functools.partial(lesson_text, "train")
_FIGURES: OrderedDict = OrderedDict()  # (what, job, snapshots shown per runner, index) -> figure, shared
_FIGURES_LOCK = threading.Lock()
FIGURES_KEPT = 96


def shared_figure(key: tuple, build):
    """The figure for `key`, built once for every session at the same point of the same run (a
    class polling one run asks for the same figures); figures are never changed once built (frozen:
    their dict is made once, not at every session's every draw)."""
    with _FIGURES_LOCK:
        if key in _FIGURES:
            _FIGURES.move_to_end(key)
            return _FIGURES[key]
    figure = frozen(build())
    with _FIGURES_LOCK:
        _FIGURES[key] = figure
        while len(_FIGURES) > FIGURES_KEPT:
            _FIGURES.popitem(last=False)
    return figure


class TrainPanel:
    """The Train and Stop buttons, and the view of the session's run of `job` (or of step 0)."""

    def __init__(self, job: LiveJob, lesson):
        self.job, self.lesson = job, lesson
        self.manager = default_manager()
        self.session = session_key()
        self.race = job.race_seconds is not None
        watched = st.session_state.get(WATCH)
        if watched is not None and watched[0] != job:  # the settings changed: let the old run go
            self.manager.release(self.session)
            st.session_state.pop(WATCH)

    # --- buttons ---------------------------------------------------------------------------------------

    def _train(self) -> None:
        try:
            self.manager.request(self.session, self.job, client_address())
            st.session_state[WATCH] = (self.job, time.monotonic())
        except QueueFull:
            st.session_state[NOTE] = text("queue full", queue=self.manager.max_queue)
        except ClientBusy:
            st.session_state[NOTE] = text("client busy", runs=self.manager.per_client)
        except ValueError as problem:  # beyond the server's caps (the controls do not allow it)
            st.session_state[NOTE] = str(problem)

    def _stop(self) -> None:
        self.manager.release(self.session)
        st.session_state.pop(WATCH, None)

    def _buttons(self, watching: bool) -> None:
        train, stop, note = st.columns([2, 2, 7], vertical_alignment="center")
        label = "Race" if self.race else "Train"
        train.button(label, icon=":material/play_arrow:", type="primary", on_click=self._train, key="train_start",
                     disabled=watching, width="stretch")
        stop.button("Stop", icon=":material/stop:", on_click=self._stop, key="train_stop", disabled=not watching,
                    width="stretch")
        if message := st.session_state.pop(NOTE, None):
            note.warning(message, icon=":material/hourglass_top:")

    # --- the views -------------------------------------------------------------------------------------

    def show(self) -> None:
        """Whichever view fits: the live fragment, the finished run with its scrubber, or step 0."""
        watched = st.session_state.get(WATCH)
        view = self.manager.poll(self.session, self.job) if watched is not None else None
        if watched is not None and view is None:
            st.session_state.pop(WATCH)
            st.session_state[NOTE] = text("gone")
        if view is not None:
            shown = progress(view, time.monotonic() - watched[1])
            if not shown.complete and view.state not in ("cancelled", "failed"):
                self._buttons(watching=True)
                self._live(watched[1])
                return
            self._buttons(watching=False)
            self._finished(view, shown.snapshots)
            return
        self._buttons(watching=False)
        cached = self.manager.finished(self.job)
        if cached is not None:
            st.caption(text("cached"))
            self._finished(cached, cached.snapshots)
        else:
            st.caption(text("untrained race" if self.race else "untrained"))
            self._draw(first_snapshots(self.job), None)

    def _live(self, since: float) -> None:
        interval = self.manager.poll_interval()

        @st.fragment(run_every=interval)
        def poll() -> None:
            view = self.manager.poll(self.session, self.job)
            if view is None:
                st.rerun()  # the run is gone: the page says so
            shown = progress(view, time.monotonic() - since)
            if shown.complete or view.state in ("cancelled", "failed"):
                st.rerun()  # into the finished view
            if repace(interval, self.manager.poll_interval()):
                st.rerun()  # a class has joined: poll at the new pace (a page rerun, so rarely)
            self._status(view, shown)
            self._draw(self._or_first(shown.snapshots), None)

        poll()

    def _status(self, view: RunView, shown: Progress) -> None:
        if view.state == "queued":
            st.progress(0.0, text=text("queued", position=view.position, slots=self.manager.slots))
            return
        latest = [s[-1] for s in shown.snapshots if s]
        if not latest:
            st.progress(0.0, text=text("starting"))
            return
        fraction = shown.fraction(self.job.runners, self.job.race_seconds)
        if self.race:
            label = text("racing", seconds=min(s.training_seconds for s in latest), total=self.job.race_seconds)
        else:
            label = text("training", step=latest[0].step, steps=self.job.runners[0].steps,
                         seconds=latest[0].seconds)
        st.progress(fraction, text=label)

    def _finished(self, view: RunView, snapshots) -> None:
        if view.state in ("cancelled", "failed") or view.message:
            st.info(text("ended", message=view.message or view.state), icon=":material/info:")
        snapshots = self._or_first(snapshots)
        steps = [s.step for s in snapshots[0]]
        if len(steps) > 1:
            if st.session_state.get(SCRUB) not in steps:
                st.session_state[SCRUB] = steps[-1]
            chosen = st.select_slider("Replay the run: step", steps, key=SCRUB,
                                      help="Every snapshot of the run, from the untrained model to the last step.")
            index = steps.index(chosen)
        else:
            index = 0
        self._draw(snapshots, index)

    def _or_first(self, snapshots) -> tuple:
        """The snapshots, with step 0 for a runner that has none yet (the same numbers the run will give)."""
        first = None
        out = []
        for runner, shown in enumerate(snapshots):
            if not shown:
                first = first or first_snapshots(self.job)
                shown = first[runner]
            out.append(shown)
        return tuple(out)

    # --- the figures -----------------------------------------------------------------------------------

    def _draw(self, snapshots, index: int | None) -> None:
        """The figures for one moment: the probe's attention in every layer and head at the snapshot
        `index` of the transformer (None: the latest), then the loss and accuracy curves or the race."""
        settings = self.job.runners[0]
        transformer = snapshots[0]
        snapshot = transformer[-1 if index is None else index]
        queries, keys = probe_tokens(settings.task, settings.letters)
        if self.race:  # the recurrent runner at the same seconds of training as the transformer's snapshot
            rival = [s for s in snapshots[1] if s.training_seconds <= snapshot.training_seconds] or snapshots[1][:1]
            st.markdown(text("moment race", seconds=snapshot.training_seconds, step=snapshot.step,
                             accuracy=100 * snapshot.accuracy, rival=self.job.runners[1].model.upper(),
                             rival_step=rival[-1].step, rival_accuracy=100 * rival[-1].accuracy))
        else:
            st.markdown(text("moment", step=snapshot.step, accuracy=100 * snapshot.accuracy, loss=snapshot.loss)
                        + (text("moment seconds", seconds=snapshot.seconds) if snapshot.step else ""))
        moment = (self.job, tuple(len(shown) for shown in snapshots), index)
        grid = shared_figure(("grid", *moment), lambda: attention_panels(snapshot.attention, queries, keys,
                                                                         cell_hover=index is not None))
        plotly_chart(grid, key="train_grid")
        self.lesson.explain()
        if self.race:
            race = shared_figure(("race", *moment), lambda: race_figure(
                [Curve(runner.model, **columns(shown)) for runner, shown in zip(self.job.runners, snapshots,
                                                                                strict=True)],
                self.job.race_seconds))
            plotly_chart(race, key="train_race")
        else:
            curves = shared_figure(("curves", *moment), lambda: training_curves(
                Curve("transformer", **columns(transformer)), settings.steps, marker=snapshot.step,
                loss_top=max(s.loss for s in transformer) * 1.05))
            plotly_chart(curves, key="train_curves")
