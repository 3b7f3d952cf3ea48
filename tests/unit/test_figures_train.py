"""explorer.lessons.train.figures: the curves and the race pass Plotly's full validation and draw the data
they are handed, on axes fixed to the whole run."""

import gc

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.figures.common import FrozenFigure, frozen
from explorer.figures.ink import inked
from explorer.lessons.train.figures import Curve, attention_panels, race_figure, training_curves
from harness.apptest import plotly_array, plotly_array_1d


def validated(fig: go.Figure) -> dict:
    return go.Figure(fig.to_dict()).to_dict()


def curve(name: str, n: int, seconds_per_step: float) -> Curve:
    steps = np.arange(n) * 25
    return Curve(name, steps, np.linspace(3, 0.1, n), np.linspace(0, 0.9, n), steps * seconds_per_step)


@pytest.mark.parametrize("stacked", [False, True])
def test_training_curves(stacked):
    data = curve("transformer", 5, 0.02)
    spec = validated(training_curves(data, 800, marker=50, stacked=stacked))
    loss, accuracy = spec["data"]
    np.testing.assert_array_equal(plotly_array_1d(loss["x"]), data.steps)
    np.testing.assert_allclose(plotly_array_1d(loss["y"]), data.loss, rtol=1e-6)  # sent as float32
    np.testing.assert_allclose(plotly_array_1d(accuracy["y"]), 100 * data.accuracy, rtol=1e-6)
    layout = spec["layout"]
    assert layout["xaxis"]["range"] == [0, 800] and layout["xaxis2"]["range"] == [0, 800]
    assert layout["yaxis"]["range"][1] == pytest.approx(3 * 1.05)
    assert [shape["x0"] for shape in layout["shapes"]] == [50, 50]
    assert layout["yaxis"]["exponentformat"] == "power", "a loss near 0 reads 6×10⁻⁵, never 60µ"
    side_by_side = layout["xaxis"]["domain"][1] < layout["xaxis2"]["domain"][0]
    assert side_by_side != stacked


def test_race_figure_draws_each_runner_against_seconds_and_steps():
    runners = [curve("transformer", 4, 0.03), curve("gru", 7, 0.015)]
    spec = validated(race_figure(runners, 10.0, stacked=True))
    assert [trace["name"] for trace in spec["data"]] == ["transformer", "transformer", "GRU", "GRU"]
    clock, steps = spec["data"][2], spec["data"][3]
    np.testing.assert_allclose(plotly_array_1d(clock["x"]), runners[1].seconds)
    np.testing.assert_array_equal(plotly_array_1d(steps["x"]), runners[1].steps)
    assert spec["layout"]["xaxis"]["range"][1] == pytest.approx(10.2)
    assert spec["layout"]["xaxis2"]["range"][1] == pytest.approx(150 * 1.02)
    assert spec["data"][0]["line"]["color"] != spec["data"][2]["line"]["color"]


@pytest.mark.parametrize(("layers", "heads", "rows"), [(2, 2, 1), (3, 4, 3), (3, 2, 2), (1, 1, 1)])
def test_attention_panels_every_layer_and_head_in_rows_of_whole_layers(layers, heads, rows):
    rng = np.random.default_rng(0)
    weights = rng.dirichlet(np.ones(6), size=(layers, heads, 7))
    spec = validated(attention_panels(weights, list("<BCDEFG"), list("ABCDEF")))
    assert len(spec["data"]) == layers * heads
    for n, trace in enumerate(spec["data"]):
        np.testing.assert_allclose(plotly_array(trace["z"]), weights[n // heads, n % heads], rtol=1e-6)
    titles = [a["text"] for a in spec["layout"]["annotations"]]
    assert titles[0] == "layer 1 · head 1" and titles[-1] == f"layer {layers} · head {heads}"
    tops = sorted({round(a["y"], 6) for a in spec["layout"]["annotations"]})
    assert len(tops) == rows
    assert spec["layout"]["coloraxis"]["cmin"] == 0 and spec["layout"]["coloraxis"]["cmax"] == 1


def test_attention_panels_without_cell_hover_still_give_the_weight():
    weights = np.random.default_rng(1).dirichlet(np.ones(6), size=(2, 2, 7))
    full = validated(attention_panels(weights, list("<BCDEFG"), list("ABCDEF")))
    light = validated(attention_panels(weights, list("<BCDEFG"), list("ABCDEF"), cell_hover=False))
    assert all("customdata" in trace and "%{customdata}" in trace["hovertemplate"] for trace in full["data"])
    assert all("customdata" not in trace and "%{customdata}" not in trace["hovertemplate"] for trace in light["data"])
    assert all("weight %{z" in trace["hovertemplate"] for trace in light["data"])
    for a, b in zip(full["data"], light["data"], strict=True):
        np.testing.assert_array_equal(plotly_array(a["z"]), plotly_array(b["z"]))
    assert full["layout"] == light["layout"]


def test_a_frozen_figure_gives_the_dict_of_the_figure_it_was_and_holds_only_text_and_numbers():
    data = curve("transformer", 5, 0.02)
    expected = go.Figure(inked(training_curves(data, 800, marker=50).to_dict())).to_dict()  # its words in ink
    figure = frozen(training_curves(data, 800, marker=50))
    assert isinstance(figure, FrozenFigure)
    assert validated(figure) == expected and figure.to_plotly_json() == figure.to_dict()
    assert figure.to_dict() is not figure.to_dict()  # a fresh dict at every draw: nobody can change the figure
    held = vars(figure)
    assert set(held) == {"_json", "phone_width"} and type(held["_json"]) is str and type(held["phone_width"]) is int
    assert not any(gc.is_tracked(value) for value in held.values())  # nothing for the garbage collector
