"""explorer.figures.sequences: every Plotly spec passes full validation (the app skips it per rerun),
every Altair chart validates against the Vega-Lite schema, and the data drawn is the data given."""

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.analysis.timing import Timing
from explorer.figures import sequences as sf
from explorer.views import gradients as gv
from explorer.views.cost import complexity_rows, operations_curves, operations_lengths
from explorer.views.depth import depth_curves
from tests.support.apptest import plotly_array

pytestmark = pytest.mark.usefixtures("one_thread")  # as in the app: one torch thread


def validated(fig: go.Figure) -> dict:
    return go.Figure(fig.to_dict()).to_dict()


@pytest.mark.parametrize("T", [1, 5, 11, 12, 512])
def test_unrolled_figure_is_valid_and_labels_the_path_lengths(T):
    spec = validated(sf.unrolled_figure(T))
    texts = [a["text"] for a in spec["layout"]["annotations"]]
    assert str(T) in texts, "x_0 is T steps from the loss in the loop"
    markers = [t for t in spec["data"] if t.get("marker", {}).get("coloraxis")]
    loop, attention = (list(t["marker"]["color"]) for t in markers)
    assert loop[0] == T and loop[-1] == 1 and set(attention) == {1}
    if T > 11:
        assert "…" in texts


def test_dependency_figure_is_valid_log_scaled_and_blank_where_zero():
    views = gv.dependency_views("gru", 8, 4)
    panels = [("loop <h>", views.recurrent), ("causal", views.causal), ("unmasked", views.unmasked)]
    spec = validated(sf.dependency_figure(panels))
    assert len(spec["data"]) == 3 and {t["coloraxis"] for t in spec["data"]} == {"coloraxis"}
    z = plotly_array(spec["data"][0]["z"])
    upper = np.triu(np.ones((8, 8), dtype=bool), 1)
    assert np.isnan(z[upper]).all()
    np.testing.assert_allclose(z[~upper], np.log10(views.recurrent[~upper]))
    assert spec["layout"]["annotations"][0]["text"] == "loop &lt;h&gt;"
    axis = spec["layout"]["coloraxis"]
    assert axis["cmin"] <= np.nanmin(z) and axis["cmax"] >= np.nanmax(z)
    frame = sf.dependency_frame(panels)
    assert len(frame) == 3 * 64 and frame["norm"].iloc[1] == views.recurrent[0, 1]


def test_gradient_chart_validates_and_keeps_exact_zeros_in_its_data():
    curves = gv.gradient_curves(10, 4, "default", 1.0, 3, 2)
    frame = sf.gradient_frame(curves)
    chart = sf.gradient_chart(frame).to_dict()  # validates against the Vega-Lite schema
    assert "rect" in [layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"]
                      for layer in chart["layer"]]
    rnn = frame[frame["model"] == "tanh RNN"]
    assert rnn["exactly_zero"].tolist() == [True] * 7 + [False] * 3
    np.testing.assert_allclose(rnn["log10 norm"].iloc[7:], curves.summary("rnn")[0][7:])
    assert rnn["steps back from the loss"].tolist() == list(range(10, 0, -1))
    assert not sf.gradient_frame(gv.gradient_curves(10, 4, "default", 1.0, None, 2))["truncated"].any()
    strip = validated(sf.gradient_strip(frame))
    z = plotly_array(strip["data"][0]["z"])
    assert z.shape == (4, 10) and np.isnan(z[0, :7]).all()
    assert strip["layout"]["yaxis"]["ticktext"] == list(gv.KIND_LABELS.values())


def test_depth_chart_and_table():
    curves = depth_curves(3, 8, 4, 2)
    frame = sf.depth_frame(curves)
    sf.depth_chart(frame).to_dict()
    heat = validated(sf.depth_heatmap(frame))
    assert plotly_array(heat["data"][0]["z"]).shape == (6, 3)
    assert len(frame) == 6 * 3
    table = sf.depth_table(frame)
    assert len(table) == 6
    values = np.log10(curves[("pre", False)]).mean(axis=0)
    row = table[table["configuration"] == "pre-norm, without residual"].iloc[0]
    assert row["orders lost"] == pytest.approx(values[-1] - values[0], abs=0.051)


def test_recall_chart_and_bands():
    result = gv.RecallAccuracy("x", np.array([1, 2, 30]), np.array([1.0, 0.5, 0.25]), np.array([10, 10, 20]), None)
    frame = sf.recall_frame([("tanh RNN", result), ("causal transformer", result)])
    sf.recall_chart(frame, chance=0.125).to_dict()
    np.testing.assert_allclose(frame["accuracy over 8 distances"][:3], [0.75, 0.75, 0.25])
    bands = sf.recall_bands([("tanh RNN", result)])
    assert bands.loc["tanh RNN", "1–8"] == pytest.approx(0.75) and bands.loc["tanh RNN", "9–30"] == 0.25
    assert len(sf.recall_frame([])) == 0


def test_cost_charts_and_table():
    rows = complexity_rows(100, 16, 3, 2)
    table = sf.complexity_frame(rows, 2)
    assert table["layer"].tolist()[0] == "CNN ×2" and table["exact"].tolist() == table["PyTorch count"].tolist()
    bars = validated(sf.cost_bars(rows))
    assert len(bars["data"]) == 4 and bars["layout"]["yaxis"]["type"] == "log"
    lengths = operations_lengths(100, 16)
    frame = sf.operations_frame(operations_curves(16, lengths), lengths)
    sf.operations_chart(frame, d=16, T=100).to_dict()
    timings = [Timing("rnn", 16, 8, 0.001, 3), Timing("attention", 16, 8, None, 0)]
    times = sf.timing_frame(timings)
    sf.timing_chart(times).to_dict()
    assert times["milliseconds"].iloc[0] == pytest.approx(1.0) and np.isnan(times["milliseconds"].iloc[1])
    assert sf.frame_csv(times).splitlines()[0].startswith("layer,T,d,milliseconds")
