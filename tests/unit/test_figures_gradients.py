"""explorer.lessons.gradients.figures: every Plotly spec passes full validation (the app skips it per rerun),
every Altair chart validates against the Vega-Lite schema, and the data drawn is the data given."""

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.figures.logscale import power_label
from explorer.figures.margins import TOOLBAR_PX
from explorer.lessons.gradients import figures
from explorer.lessons.gradients import measures as gv
from harness.apptest import plotly_array


def validated(fig: go.Figure) -> dict:
    return go.Figure(fig.to_dict()).to_dict()


def paths(T: int) -> dict[str, np.ndarray]:
    return {kind: gv.path_lengths(T, kind) for kind in gv.KIND_LABELS}


def test_dependency_figure_is_valid_log_scaled_and_blank_where_zero():
    views = gv.dependency_views("gru", 8, 4)
    panels = [("loop <h>", views.recurrent), ("causal", views.causal), ("unmasked", views.unmasked)]
    spec = validated(figures.dependency_figure(panels))
    assert len(spec["data"]) == 3 and {t["coloraxis"] for t in spec["data"]} == {"coloraxis"}
    z = plotly_array(spec["data"][0]["z"])
    upper = np.triu(np.ones((8, 8), dtype=bool), 1)
    assert np.isnan(z[upper]).all()
    np.testing.assert_allclose(z[~upper], np.log10(views.recurrent[~upper]))
    assert spec["layout"]["annotations"][0]["text"] == "loop &lt;h&gt;"
    axis = spec["layout"]["coloraxis"]
    assert axis["cmin"] <= np.nanmin(z) and axis["cmax"] >= np.nanmax(z)
    frame = figures.dependency_frame(panels)
    assert len(frame) == 3 * 64 and frame["norm"].iloc[1] == views.recurrent[0, 1]


def test_gradient_figure_validates_and_leaves_exact_zeros_out_of_its_lines():
    curves = gv.gradient_curves(10, 4, "default", 1.0, 3, 2)
    frame = figures.gradient_frame(curves, gv.KIND_LABELS, paths(10))
    figure = validated(figures.gradient_figure(frame))
    lines = {trace["name"]: trace for trace in figure["data"] if "name" in trace}
    assert list(lines) == list(gv.KIND_LABELS.values())
    assert lines["tanh RNN"]["x"] == [7, 8, 9] and lines["causal attention"]["x"] == list(range(10))
    np.testing.assert_allclose(lines["tanh RNN"]["y"], curves.summary("rnn")[0][7:])
    assert lines["tanh RNN"]["customdata"] == [3, 2, 1], "the steps back from the loss, in the hover"
    assert {lines[k]["line"]["dash"] for k in ("tanh RNN", "LSTM", "GRU")} == {"dash"}
    assert lines["causal attention"]["line"]["dash"] == "solid"
    bands = [trace for trace in figure["data"] if trace.get("fill") == "toself"]
    assert len(bands) == 4 and all(band["hoverinfo"] == "skip" for band in bands)
    assert figure["layout"]["shapes"][0]["x1"] == 6 and "up to t = 6" in figure["layout"]["annotations"][0]["text"]
    # The legend at the chart's foot and the top band left to the toolbar: on a phone the legend wraps onto
    # two rows, and above the plot its first row ran under the toolbar's buttons.
    legend, margin = figure["layout"]["legend"], figure["layout"]["margin"]
    assert (legend["yref"], legend["y"], legend["yanchor"]) == ("container", 0, "bottom")
    assert margin["t"] >= TOOLBAR_PX
    ticks = figure["layout"]["yaxis"]
    pairs = zip(ticks["tickvals"], ticks["ticktext"], strict=True)
    assert all(text == power_label(value) for value, text in pairs)  # 10⁻²⁰, not 1e-20
    rnn = frame[frame["model"] == "tanh RNN"]
    assert rnn["exactly_zero"].tolist() == [True] * 7 + [False] * 3
    np.testing.assert_allclose(rnn["log10 norm"].iloc[7:], curves.summary("rnn")[0][7:])
    assert rnn["steps back from the loss"].tolist() == list(range(10, 0, -1))
    full = gv.gradient_curves(10, 4, "default", 1.0, None, 2)
    assert not figures.gradient_frame(full, gv.KIND_LABELS, paths(10))["truncated"].any()
    strip = validated(figures.gradient_strip(frame))
    z = plotly_array(strip["data"][0]["z"])
    assert z.shape == (4, 10) and np.isnan(z[0, :7]).all()
    assert strip["layout"]["yaxis"]["ticktext"] == list(gv.KIND_LABELS.values())


def test_recall_chart_and_bands():
    result = gv.RecallAccuracy("x", np.array([1, 2, 30]), np.array([1.0, 0.5, 0.25]), np.array([10, 10, 20]), None)
    frame = figures.recall_frame([("tanh RNN", result), ("causal transformer", result)], binned=gv.binned_accuracy)
    figures.recall_chart(frame, chance=0.125).to_dict()
    np.testing.assert_allclose(frame["accuracy over 8 distances"][:3], [0.75, 0.75, 0.25])
    bands = figures.recall_bands([("tanh RNN", result)], bands=gv.accuracy_bands)
    assert bands.loc["tanh RNN", "1–8"] == pytest.approx(0.75) and bands.loc["tanh RNN", "9–30"] == 0.25
    assert len(figures.recall_frame([], binned=gv.binned_accuracy)) == 0
