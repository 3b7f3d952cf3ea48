"""explorer.lessons.cost.figures: the bars pass Plotly's full validation, the charts validate against the
Vega-Lite schema, and the tables hold the counts and timings given."""

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.analysis.timing import TIMED_LAYERS, Timing
from explorer.figures.common import frame_csv
from explorer.lessons.cost import figures
from explorer.lessons.cost.counts import complexity_rows, operations_curves, operations_lengths


def validated(fig: go.Figure) -> dict:
    return go.Figure(fig.to_dict()).to_dict()


def test_cost_bars_labels_stand_upright_at_full_size_with_room_above():
    """Laid flat, four to a group, the value labels ran together at 390 px and presenting at 1280 px
    ("12.4k8.32k16.6k"): upright (turned 90°), never shrunk to the bar, with a fifth of the axis above the
    tallest bar for them."""
    bars = validated(figures.cost_bars(complexity_rows(512, 64, 3, 1)))
    assert all(t["textangle"] == -90 and t["constraintext"] == "none" for t in bars["data"])
    low, high = bars["layout"]["yaxis"]["range"]
    top = np.log10(max(max(t["y"]) for t in bars["data"]))
    assert low < 0 and (high - top) / (high - low) == pytest.approx(0.2)


@pytest.mark.parametrize(("T", "k", "n_layers", "short"), [(512, 3, 6, True), (512, 3, 1, True), (9, 3, 4, False),
                                                          (17, 3, 8, False), (512, 3, 256, False)])
def test_a_stack_too_shallow_to_connect_the_ends_says_its_path_bar_is_the_layers_it_needs(T, k, n_layers, short):
    """Six convolutions (k = 3) see 13 of 512 positions: there is no path from the last output to the first
    input, and the bar's value is the 256 layers needed.  The bar says so; a deep enough stack's does not."""
    bars = validated(figures.cost_bars(complexity_rows(T, 16, k, n_layers), n_layers))
    cnn = next(t for t in bars["data"] if t["name"].startswith("CNN"))
    assert cnn["texttemplate"][:3] == ["%{y:.3~s}"] * 3
    assert (cnn["texttemplate"][3] == "needs %{y} layers") == short and (cnn["y"][3] > n_layers) == short
    assert ("cannot reach" in cnn["hovertemplate"][3]) == short
    assert all(t["texttemplate"][3] == "%{y:.3~s}" for t in bars["data"] if t is not cnn)


def test_cost_charts_and_table():
    rows = complexity_rows(100, 16, 3, 2)
    table = figures.complexity_frame(rows, 2)
    assert table["layer"].tolist()[0] == "CNN ×2" and table["exact"].tolist() == table["PyTorch count"].tolist()
    bars = validated(figures.cost_bars(rows))
    assert len(bars["data"]) == 4 and bars["layout"]["yaxis"]["type"] == "log"
    lengths = operations_lengths(100, 16)
    frame = figures.operations_frame(operations_curves(16, lengths), lengths)
    figures.operations_chart(frame, d=16, T=100).to_dict()
    timings = [Timing("rnn", 16, 8, 0.001, 3), Timing("attention", 16, 8, None, 0)]
    times = figures.timing_frame(timings, TIMED_LAYERS)
    figures.timing_chart(times, TIMED_LAYERS).to_dict()
    assert times["milliseconds"].iloc[0] == pytest.approx(1.0) and np.isnan(times["milliseconds"].iloc[1])
    assert frame_csv(times).splitlines()[0].startswith("layer,T,d,milliseconds")


def _your_t_label(chart: dict) -> dict:
    return next(layer for layer in chart["layer"] if str(layer.get("encoding", {}).get("text", {}).get("value", ""))
                .startswith("your T"))


@pytest.mark.parametrize(("T", "d", "right"), [(512, 64, False), (4096, 64, False), (100, 128, False), (2, 64, True),
                                               (16, 512, True)])
def test_your_t_label_sits_at_the_foot_of_its_rule_on_the_side_with_room(T, d, right):
    """At the bottom of the plot every curve is above it (they all rise with T, from the plot's lowest
    value at T = 1), so no line crosses the label; it goes left of the rule when the T = d rule is
    too close on the right or the plot ends there (the axis runs to 4·T: often too close)."""
    lengths = operations_lengths(T, d)
    chart = figures.operations_chart(figures.operations_frame(operations_curves(d, lengths), lengths), d=d, T=T)
    label = _your_t_label(chart.to_dict())
    assert label["encoding"]["y"]["value"] == "height" and label["mark"]["baseline"] == "bottom"
    assert label["mark"]["align"] == ("left" if right else "right")


def test_the_stopwatch_legend_names_every_layer_shorter_on_a_phone():
    """On a phone the three names were cut to "…" ("tanh RNN, torch.nn.RNN (loop ov…"): the legend's
    label expression gives each a shorter name there, and the whole name on wider charts."""
    import json
    import re

    timings = [Timing(kind, 16, 8, 0.001, 3) for kind in TIMED_LAYERS]
    chart = figures.timing_chart(figures.timing_frame(timings, TIMED_LAYERS), TIMED_LAYERS).to_dict()
    expression = chart["encoding"]["color"]["legend"]["labelExpr"]
    short = json.loads(re.search(r"\((\{.*\})\[datum\.label\]", expression).group(1))
    assert set(short) == set(TIMED_LAYERS.values())
    assert all(len(short[name]) < len(name) for name in short)
    assert expression.startswith("width < ") and expression.endswith(": datum.label")
