"""Issue 29: with the lesson's default settings, attention visibly forms.  The default run, trained to
its planned number of steps (never timed: a run is a function of its settings), reaches 90 %
held-out accuracy, and its last layer's head — the probe's sharpest, named under the grid — rests
each row mostly on one input letter: a mean row maximum of 0.7 or more, on the anti-diagonal.  The
second lesson step's answer quotes this run, steps 3–5 quote runs of their own: their numbers are
checked against those runs (the race of step 6 is timed, and not checked here)."""

from __future__ import annotations

import numpy as np
import pytest

from explorer.serve.steps import load_steps
from explorer.training.live import run_settings
from explorer.training.runs import RunView
from explorer.views.train import TrainSettings, at_moment, train_view


def anti_diagonal(attention: np.ndarray) -> np.ndarray:
    """(layers, heads): the mean weight on the reversal's cells (answer row i, input letter n − 1 − i)."""
    n = attention.shape[-1]
    return attention[:, :, np.arange(n), np.arange(n)[::-1]].mean(-1)


@pytest.fixture(scope="module")
def default_run():
    settings = TrainSettings()
    return settings, list(run_settings(settings.job.runners[0]))


def test_the_defaults_learn_and_their_attention_forms_a_line(default_run):
    settings, snapshots = default_run
    last = snapshots[-1]
    assert last.step == settings.steps, "the run ended before its planned steps (its seconds cap)"
    assert last.accuracy >= 0.9
    rows = last.attention.max(-1).mean(-1)  # (layers, heads)
    assert rows[-1].max() >= 0.7, rows
    assert snapshots[0].attention.max(-1).mean(-1).max() < 0.35  # step 0 is a blur
    n = last.attention.shape[-1]
    assert anti_diagonal(snapshots[0].attention).max() < 1.5 / n
    assert anti_diagonal(last.attention)[-1].max() >= 0.6  # the bright cells are the anti-diagonal's
    # The sentence under the grid names that head and its number, from the view of the last snapshot.
    view = train_view(settings)
    run = RunView(settings.job, "done", 0, (tuple(snapshots),), (tuple(0.0 for _ in snapshots),))
    layer, head, sharp = at_moment(view, run).sharpness()
    assert (layer, head) == (settings.n_layers, 1) and sharp == pytest.approx(float(rows[-1].max()))


def test_the_watch_step_quotes_the_default_run(default_run):
    settings, snapshots = default_run
    step = load_steps("train")[1]
    names = {"heads": "n_heads", "layers": "n_layers"}
    assert TrainSettings(**{names.get(k, k): v for k, v in step.settings.items()}) == settings
    first = next(s for s in snapshots if s.accuracy >= 0.9)
    start, end = anti_diagonal(snapshots[0].attention)[:, 0], anti_diagonal(snapshots[-1].attention)[:, 0]
    quoted = [f"passes 90 % at step {first.step}", f"ends at {100 * snapshots[-1].accuracy:.0f} %",
              f"from {start[1]:.2f} to {end[1]:.2f}", f"from {start[0]:.2f} to {end[0]:.2f}",
              f"averages {snapshots[-1].attention[-1].max(-1).mean():.2f}"]
    assert [q for q in quoted if q not in step.reveal] == []


def quoted_numbers(title: str, snapshots) -> list[str]:
    """What the answers of steps 3–5 quote from their run, formatted as they quote it."""
    first, last = snapshots[0], snapshots[-1]
    reached = next((s.step for s in snapshots if s.accuracy >= 0.9), None)
    anti = anti_diagonal(last.attention)[:, 0]
    if title == "Take the positions away":
        return [f"{100 * last.accuracy:.0f} % after {last.step} steps", f"near {last.loss:.2f}",
                f"layer 2 puts {anti[1]:.2f}"]
    if title == "One layer instead of two":
        return [f"passes 90 % at step {reached}", f"ends at {100 * last.accuracy:.0f} %", f"putting {anti[0]:.2f}"]
    # Sorting B E A D F C: row i writes the i-th letter of A B C D E F, at these input positions.
    at = [2, 0, 5, 3, 1, 4]
    right = [np.mean([s.attention[1, 0, i, j] for i, j in enumerate(at)]) for s in (first, last)]
    return [f"reaches {100 * last.accuracy:.0f} %", f"on average {right[1]:.2f}", f"({right[0]:.2f} at step 0)",
            "looks at B instead" if np.argmax(last.attention[1, 0, 0]) == 0 else "its first row looks at A"]


@pytest.mark.parametrize("index", [2, 3, 4], ids=["no positions", "one layer", "sorting"])
def test_the_later_steps_quote_their_runs(index):
    step = load_steps("train")[index]
    names = {"heads": "n_heads", "layers": "n_layers"}
    settings = TrainSettings(**{names.get(k, k): v for k, v in step.settings.items()})
    snapshots = list(run_settings(settings.job.runners[0]))
    assert snapshots[-1].step == settings.steps
    assert [q for q in quoted_numbers(step.title, snapshots) if q not in step.reveal] == []
