"""explorer/figures/phone.py: a finished figure laid out again for a phone's width.  Checked on figures made
with Plotly's own make_subplots (its panel titles, its domains) and on the app's figures, against what each
rule promises: panels one under the other in reading order without overlapping, each title and colour bar
with its own panel, text no wider than its room; and the app's session test of a phone (its User-Agent)."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import plotly.io
import pytest
from plotly.subplots import make_subplots

from explorer.figures.margins import label_width
from explorer.figures.phone import PHONE_CHART_PX, fit_phone


def spec_of(figure: go.Figure) -> dict:
    return json.loads(plotly.io.to_json(figure, validate=False))


def two_heatmaps(columns: int = 6) -> dict:
    """Two heatmaps side by side, each with its own colour bar and a make_subplots title."""
    figure = make_subplots(rows=1, cols=2, subplot_titles=("left panel", "right panel"), horizontal_spacing=0.15)
    z = np.arange(4 * columns, dtype=float).reshape(4, columns)
    figure.add_trace(go.Heatmap(z=z, colorbar={"x": 0.45, "len": 1.0}), row=1, col=1)
    figure.add_trace(go.Heatmap(z=-z, colorbar={"x": 1.02, "len": 1.0}), row=1, col=2)
    figure.update_layout(height=300, margin={"l": 40, "r": 40, "t": 40, "b": 30})
    return spec_of(figure)


def test_side_by_side_panels_are_stacked_in_reading_order_without_overlap():
    phone = fit_phone(two_heatmaps())
    layout = phone["layout"]
    assert layout["xaxis"]["domain"] == [0.0, 1.0] and layout["xaxis2"]["domain"] == [0.0, 1.0]
    (a0, a1), (b0, b1) = layout["yaxis"]["domain"], layout["yaxis2"]["domain"]
    assert a0 > b1, "the left panel goes above the right one, with a gap"
    assert 0.0 <= b0 < b1 <= a0 < a1 <= 1.0
    # each keeps its own height in px (300 − 70 px of plot before; the chart grows to hold both)
    plot_px = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    assert (a1 - a0) * plot_px == pytest.approx(230, abs=2)
    assert (b1 - b0) * plot_px == pytest.approx(230, abs=2)


def test_panel_titles_and_colour_bars_go_with_their_panels():
    phone = fit_phone(two_heatmaps())
    layout = phone["layout"]
    titles = {note["text"]: note for note in layout["annotations"]}
    top_panel, bottom_panel = layout["yaxis"]["domain"], layout["yaxis2"]["domain"]
    assert titles["left panel"]["y"] == pytest.approx(top_panel[1], abs=1e-6)  # on its panel's top edge
    assert titles["right panel"]["y"] == pytest.approx(bottom_panel[1], abs=1e-6)
    assert titles["left panel"]["x"] == titles["right panel"]["x"] == pytest.approx(0.5)
    left_bar, right_bar = phone["data"][0]["colorbar"], phone["data"][1]["colorbar"]
    assert left_bar["y"] == pytest.approx(top_panel[1])
    assert left_bar["len"] == pytest.approx(top_panel[1] - top_panel[0])
    assert right_bar["y"] == pytest.approx(bottom_panel[1])
    assert left_bar["x"] == right_bar["x"] == 1.02  # both right of the plot, no longer between the panels


def test_a_figure_in_one_column_keeps_its_domains():
    figure = make_subplots(rows=2, cols=1)
    figure.add_trace(go.Scatter(y=[1, 2]), row=1, col=1)
    figure.add_trace(go.Scatter(y=[2, 1]), row=2, col=1)
    spec = spec_of(figure)
    phone = fit_phone(spec)
    assert phone["layout"]["yaxis"]["domain"] == spec["layout"]["yaxis"]["domain"]
    assert phone["layout"]["yaxis2"]["domain"] == spec["layout"]["yaxis2"]["domain"]


def test_row_labels_named_once_beside_are_named_on_each_stacked_panel():
    figure = make_subplots(rows=1, cols=2, shared_yaxes=True)
    for col in (1, 2):
        figure.add_trace(go.Heatmap(z=np.eye(3), showscale=False), row=1, col=col)
    figure.update_yaxes(tickmode="array", tickvals=[0, 1, 2], ticktext=["a", "b", "c"], range=[2.5, -0.5], row=1, col=1)
    figure.update_yaxes(showticklabels=False, range=[2.5, -0.5], row=1, col=2)
    phone = fit_phone(spec_of(figure))
    assert phone["layout"]["yaxis2"]["ticktext"] == ["a", "b", "c"] and phone["layout"]["yaxis2"]["showticklabels"]


def test_cell_values_shrink_to_their_cells_or_are_left_out():
    for columns, kept in ((6, True), (40, False)):
        figure = go.Figure(go.Heatmap(z=np.full((3, columns), 0.5), texttemplate="%{z:.2f}",
                                      textfont={"size": 14}))
        figure.update_layout(margin={"l": 30, "r": 10, "t": 10, "b": 30})
        phone = fit_phone(spec_of(figure))
        trace = phone["data"][0]
        if kept:
            size = trace["textfont"]["size"]
            assert 10 <= size <= 14
        else:
            assert trace["texttemplate"] == ""
    # annotations at the cells' centres (the attention lesson's values) go the same way
    figure = go.Figure(go.Heatmap(z=np.zeros((2, 40))))
    for x in range(40):
        figure.add_annotation(x=x, y=0, text="0.50", showarrow=False, font={"size": 14})
    figure.add_annotation(x=0.5, y=1.1, xref="paper", yref="paper", text="a title", showarrow=False)
    phone = fit_phone(spec_of(figure))
    assert [note["text"] for note in phone["layout"]["annotations"]] == ["a title"]


def test_a_legend_beside_the_plot_goes_under_it():
    figure = go.Figure([go.Scatter(y=[1, 2], name="first series"), go.Scatter(y=[2, 1], name="second series")])
    figure.update_layout(height=300, legend={"x": 1.02, "y": 1})
    spec = spec_of(figure)
    phone = fit_phone(spec)
    legend = phone["layout"]["legend"]
    assert legend["orientation"] == "h" and legend["yref"] == "container" and legend["y"] == 0
    assert phone["layout"]["height"] > 300  # the plot keeps its height, the legend's rows added under it


def test_a_long_title_fits_left_of_the_toolbar():
    figure = go.Figure(go.Scatter(y=[1, 2]))
    long = "Percentage of sentences where the pronoun weighs the right noun more than the wrong one"
    figure.update_layout(title={"text": long, "font": {"size": 20}})
    title = fit_phone(spec_of(figure))["layout"]["title"]
    assert title["xanchor"] == "left" and title["x"] == 0.0
    lines = title["text"].split("<br>")
    assert len(lines) > 1 and " ".join(lines) == long
    room = PHONE_CHART_PX - 84
    assert all(label_width(line, title["font"]["size"]) * 0.8 <= room for line in lines)


def test_crowded_token_labels_stand_on_end_and_thin_out():
    tokens = [f"token{i}" for i in range(40)]
    figure = go.Figure(go.Heatmap(z=np.zeros((3, 40))))
    figure.update_xaxes(tickmode="array", tickvals=list(range(40)), ticktext=tokens, tickangle=0)
    axis = fit_phone(spec_of(figure))["layout"]["xaxis"]
    assert axis["tickangle"] == -90
    shown = [t for t in axis["ticktext"] if t]
    assert 1 < len(shown) < 40 and shown[0] == "token0"  # every k-th label, a line's height apart


def test_the_input_is_not_changed():
    spec = two_heatmaps()
    before = json.dumps(spec, sort_keys=True)
    fit_phone(spec)
    assert json.dumps(spec, sort_keys=True) == before


@pytest.mark.parametrize(("agent", "phone"), [
    ("Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124 Mobile Safari/537",
     True),
    ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148",
     True),
    ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36", False),
    ("Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Safari/604.1", False),
    ("", False)])
def test_a_phone_is_known_by_its_user_agent(monkeypatch, agent, phone):
    from types import SimpleNamespace

    import streamlit as st

    from explorer.kit import present

    monkeypatch.setattr(st, "context", SimpleNamespace(headers={"User-Agent": agent}))
    assert present.on_phone() is phone
