"""explorer.figures.matrices: every spec passes Plotly's / Vega-Lite's full validation, matrices
go out as float32 on their true indices, and lines are drawn in data order."""

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from explorer.figures.matrices import line_chart, matrix_heatmap, panel_grid
from harness.apptest import plotly_array


def validated(fig: go.Figure) -> dict:
    return go.Figure(fig.to_dict()).to_dict()


def test_matrix_heatmap_is_valid_float32_with_true_indices_and_explicit_colours():
    z = np.arange(12, dtype=float).reshape(3, 4) - 5
    fig = matrix_heatmap(z, row_values=np.array([0, 4, 8]), col_values=np.array([0, 5, 10, 15]), x_title="dimension",
                         y_title="position", value_name="PE", row_labels=["a", "<b>", "c"], annotate=True)
    spec = validated(fig)
    trace = spec["data"][0]
    assert trace["z"]["dtype"] == "f4"
    np.testing.assert_array_equal(plotly_array(trace["z"]), z)
    assert plotly_array(trace["x"]).tolist() == [0, 5, 10, 15] and plotly_array(trace["y"]).tolist() == [0, 4, 8]
    assert trace["zmin"] == -6 and trace["zmax"] == 6, "diverging scale centred on 0"
    assert isinstance(fig.to_dict()["data"][0]["colorscale"], list), "stops, not a name plotly.js may not know"
    assert spec["layout"]["yaxis"]["ticktext"] == ["a", "&lt;b&gt;", "c"]
    with pytest.raises(ValueError):
        matrix_heatmap(z, row_values=[0, 1], x_title="x", y_title="y", value_name="v")


def test_large_matrix_heatmap_stays_small():
    z = np.random.default_rng(0).standard_normal((256, 256))
    fig = matrix_heatmap(z, x_title="x", y_title="y", value_name="v")
    assert "customdata" not in fig.to_dict()["data"][0]
    assert len(fig.to_json()) < 600_000
    validated(fig)


def test_panel_grid_is_valid_with_one_colour_axis_and_titles():
    panels = [np.full((3, 4), float(i)) for i in range(5)]
    panels[0][0, 1] = np.nan
    fig = panel_grid(panels, titles=[f"p{i}" for i in range(5)], row_labels=[list("abc")] * 5, x_title="key",
                     y_title="query", value_name="w", columns=3)
    spec = validated(fig)
    assert len(spec["data"]) == 5 and {t["coloraxis"] for t in spec["data"]} == {"coloraxis"}
    assert [a["text"] for a in spec["layout"]["annotations"]] == [f"p{i}" for i in range(5)]
    assert spec["layout"]["coloraxis"]["cmin"] == -4 and spec["layout"]["coloraxis"]["cmax"] == 4
    assert np.isnan(plotly_array(spec["data"][0]["z"])[0, 1])
    assert spec["layout"]["xaxis4"]["domain"] == spec["layout"]["xaxis"]["domain"], "second row, first column"
    with pytest.raises(ValueError):
        panel_grid(panels, titles=["one"], x_title="x", y_title="y", value_name="v")


def test_panel_grid_leaves_room_between_columns_for_the_row_labels():
    """At a phone's width (PHONE_GRID_PX of plot) the gap between two columns holds the right panel's row
    labels: a fixed 0.06 (24 px) let "<s>" and "0 · C" stand over the panel to their left at 390 px."""
    from explorer.figures.margins import PHONE_GRID_PX, label_width

    panels = [np.zeros((3, 3))] * 3
    for labels, size in ((["<s>", "A", "B"], 14), (["0 · C", "1 · E", "2 · D"], 13), (None, 13)):
        layout = panel_grid(panels, titles=["a", "b", "c"], row_labels=[labels] * 3, x_title="k", y_title="q",
                            value_name="v", label_size=size).to_dict()["layout"]
        gap = layout["xaxis2"]["domain"][0] - layout["xaxis"]["domain"][1]
        widest = max(label_width(t, size) for t in labels or ["2"])
        assert gap >= 0.06 and gap * PHONE_GRID_PX >= widest + 12
    single = panel_grid(panels[:1], titles=["a"], x_title="k", y_title="q", value_name="v").to_dict()["layout"]
    assert single["xaxis"]["domain"] == [0.0, 1.0]


@pytest.mark.parametrize("kwargs", [{}, {"color": "series"}, {"log_y": True, "step": True}])
def test_line_chart_is_valid_vega_lite_with_lines_in_data_order(kwargs):
    frame = pd.DataFrame({"x": [0, 1, 2, 0, 1, 2], "y": [1.0, 2.0, 3.0, 1.0, 2.0, 3.0],
                          "series": ["second", "second", "second", "first", "first", "first"]})
    chart = line_chart(frame, x="x", y="y", title="t", **kwargs)
    spec = chart.to_dict()  # validates against the Vega-Lite schema
    alt.Chart.from_dict(spec)
    if "color" in kwargs:
        assert spec["encoding"]["color"]["scale"]["domain"] == ["second", "first"]
        widths = spec["encoding"]["strokeWidth"]["scale"]["range"]
        assert widths[0] > widths[1], "the first line is wide, so a coinciding second one shows on top"
        assert spec["encoding"]["color"]["title"] == "series"
        untitled = line_chart(frame, x="x", y="y", title="t", legend_title=False, **kwargs).to_dict()
        assert untitled["encoding"]["color"]["title"] is None  # entries that name themselves: no "line" over them
    assert "layer" not in spec, "one chart: layers cost several times more per rerun"
