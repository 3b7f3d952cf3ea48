"""Margins worked out on the server (explorer/figures/margins.py): which figures get them, that they
hold their labels, and that presentation mode works them out again for its larger text.  That no
label is cut off in a real browser is checked by tests/browser (assert_no_label_cut)."""

from __future__ import annotations

import json
import math

import plotly.graph_objects as go
import pytest

from explorer.figures.common import FONT_SIZE, bar_chart, frozen, heatmap, token_axis
from explorer.figures.margins import FITTED, PAD, SAFETY, TITLE_AXES, fit_margins, label_width, phone_width
from explorer.figures.presentation import PRESENT_FONT_PX, enlarge_plotly
from explorer.lessons import specs
from explorer.serve import runtime

LESSONS = specs()


BY_NAME = {lesson.name: lesson for lesson in LESSONS}


def spec_of(figure) -> dict:
    return json.loads(figure.to_json())


def test_wider_text_is_wider_and_entities_count_as_one_character():
    assert label_width("WWW", 16) > label_width("iii", 16)
    assert label_width("animal", 20) > label_width("animal", 16)
    assert label_width("&lt;s&gt;", 16) == label_width("<s>", 16)


def test_a_figure_of_token_axes_gets_margins_and_no_automargin():
    labels = ["the", "animal", "didn't", "cross"]
    spec = spec_of(heatmap([[0.1] * 4] * 4, x_labels=labels, y_labels=labels))
    fitted = fit_margins(spec)
    layout = fitted["layout"]
    assert all(layout[axis]["automargin"] is False for axis in ("xaxis", "yaxis"))
    widest = max(label_width(t, FONT_SIZE) for t in labels)
    assert layout["margin"]["l"] >= widest + PAD  # the row labels, on the left
    assert layout["margin"]["t"] >= spec["layout"]["margin"]["t"]  # never less than the figure asked for
    assert layout["meta"][FITTED] == {side: spec["layout"]["margin"][side] for side in "lrtb"}
    assert spec["layout"]["yaxis"]["automargin"] is True, "the spec given is not changed"


def test_longer_labels_get_a_wider_margin():
    short = fit_margins(spec_of(heatmap([[0.1]], x_labels=["a"], y_labels=["a"])))
    long = fit_margins(spec_of(heatmap([[0.1]], x_labels=["a"], y_labels=["extraordinarily"])))
    assert long["layout"]["margin"]["l"] > short["layout"]["margin"]["l"] + 50


def test_an_axis_plotly_labels_itself_leaves_the_figure_to_automargin():
    spec = spec_of(bar_chart(["a", "b"], [0.2, 0.8], title="t", value_title="weight"))  # a numeric x axis
    assert fit_margins(spec) is spec


def test_labels_on_several_lines_get_a_line_of_margin_each():
    """Staggered key labels (a word stepped down one or two lines with <br>) reach down by their lines."""
    def bottom(labels):
        axis = {"tickmode": "array", "tickvals": list(range(len(labels))), "ticktext": labels, "tickangle": 0,
                "tickfont": {"size": 18}}
        spec = {"data": [], "layout": {"xaxis": axis, "yaxis": {"showticklabels": False}, "margin": {"b": 0}}}
        return fit_margins(spec)["layout"]["margin"]["b"]

    one, two, three = bottom(["the", "cat"]), bottom(["the", "<br>cat"]), bottom(["a", "<br>b", "<br><br>c"])
    assert two - one >= 18 * 1.3 and three - two >= 18 * 1.3  # Plotly's lines are 1.3 em apart


def test_slanted_labels_at_the_bottom_reach_down_and_to_the_left():
    axis = token_axis(["attention", "is", "everything"], domain=(0.0, 1.0), anchor="y", size=16)
    assert axis["tickangle"] == -45
    spec = {"data": [], "layout": {"xaxis": axis, "yaxis": {"showticklabels": False}, "margin": {"l": 0, "b": 0}}}
    margin = fit_margins(spec)["layout"]["margin"]
    assert margin["b"] > 0.7 * label_width("everything", 16)  # the longest, at 45°
    assert margin["l"] >= 0.7 * label_width("attention", 16)  # the first one leans left


def test_presentation_mode_works_the_margins_out_again_for_its_larger_text():
    labels = ["the", "animal", "didn't", "cross"]
    fitted = fit_margins(spec_of(heatmap([[0.1] * 4] * 4, x_labels=labels, y_labels=labels)))
    enlarged = enlarge_plotly(fitted)
    assert enlarged["layout"]["yaxis"]["tickfont"]["size"] >= PRESENT_FONT_PX
    assert enlarged["layout"]["margin"]["l"] > fitted["layout"]["margin"]["l"]
    assert enlarged["layout"]["meta"][FITTED] == fitted["layout"]["meta"][FITTED], "from the figure's own margins"
    assert enlarge_plotly(enlarged)["layout"]["margin"] == enlarged["layout"]["margin"], "not compounded"


@pytest.mark.parametrize(("lesson", "field"), [("attention", "pipeline"), ("attention", "grid"), ("decoder", "step"),
                                               ("length/window", "masks")])
def test_presenting_gives_every_line_of_the_panel_titles_room_above_the_plot(lesson, field):
    """Two-line panel titles at the projector's size reached 2 px past the chart's top (attention's four
    steps, seen in Chromium): the top margin holds every line of the titles standing on the plot, at
    plotly.js's own line spacing (1.3 em), the gap above the plot they stand at, and SAFETY px to spare
    as every margin worked out (the drawn box of two lines at 18 px was 2.5 px taller than 2 × 1.3 em)."""
    spec = frozen(getattr(runtime.shown(BY_NAME[lesson], BY_NAME[lesson].settings()).figures, field)).to_dict()
    presented = enlarge_plotly(spec)
    layout = presented["layout"]
    plot_px = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    titles = [note for note in layout["annotations"] if note.get("yanchor") == "bottom" and note["y"] >= 1]
    assert titles, "the figure has panel titles over its plot"
    for note in titles:
        lines = note["text"].count("<br>") + 1
        need = (note["y"] - 1) * plot_px + lines * 1.3 * note["font"]["size"] + SAFETY
        assert layout["margin"]["t"] >= need, note["text"]
    assert enlarge_plotly(presented)["layout"]["margin"] == layout["margin"], "not compounded"


@pytest.mark.parametrize(("lesson", "field"), [("lookup", "matrix"), ("attention", "grid"), ("attention", "layer_grid"),
                                               ("decoder", "step"), ("train", "grid"), ("real", "overview"),
                                               ("encoders", "vectors")])
def test_the_lessons_token_figures_are_sent_with_their_margins_worked_out(lesson, field):
    figure = getattr(runtime.shown(BY_NAME[lesson], BY_NAME[lesson].settings()).figures, field)
    sent = frozen(figure).to_dict()
    axes = [axis for name, axis in sent["layout"].items() if name.startswith(("xaxis", "yaxis"))]
    assert axes and all(axis["automargin"] is False for axis in axes)
    assert FITTED in sent["layout"]["meta"]


def _titled(*titles: tuple[str, float], y: float = 1.0) -> dict:
    return {"data": [], "layout": {"margin": {"l": 40, "r": 20, "t": 30, "b": 30},
                                   "annotations": [{"text": text, "x": x, "y": y, "xref": "paper", "yref": "paper",
                                                    "font": {"size": 14}} for text, x in titles]}}


def test_phone_width_is_where_panel_titles_side_by_side_stop_running_into_each_other():
    two = phone_width(_titled(("head 1", 0.25), ("head 2", 0.75)))
    need = (label_width("head 1", 14) + label_width("head 2", 14)) / 2 + 8  # px between their centres
    assert two == math.ceil(40 + 20 + need / 0.5)
    assert phone_width(_titled(("a longer title", 0.25), ("head 2", 0.75))) > two  # longer text, wider
    assert phone_width(_titled(("head 1", 0.1), ("head 2", 0.9))) < two  # further apart, narrower
    twelve = phone_width(_titled(*[(f"head {i}", (i - 0.5) / 12) for i in range(1, 13)]))
    assert twelve > 3 * two  # twelve panels: each pair of neighbours twelve times closer than two halves
    assert phone_width(_titled(("alone", 0.5))) == 0
    on_two_rows = _titled(("head 1", 0.25), y=1.0)
    on_two_rows["layout"]["annotations"] += _titled(("head 2", 0.26), y=0.5)["layout"]["annotations"]
    assert phone_width(on_two_rows) == 0  # titles of different rows never meet side by side
    marked = phone_width(_titled(("<span style='color:#E69F00'>■</span> head 1", 0.25), ("head 2", 0.75)))
    assert marked < phone_width(_titled(("<span style='color:#E69F00'>■</span> head 1".replace("<", "&lt;"), 0.25),
                                        ("head 2", 0.75)))  # markup is not drawn as text


def test_phone_width_reads_panel_titles_drawn_as_an_axis_tick_labels():
    """The same titles as notes or as the tick labels of an axis the figure names in its meta: the
    same width; an axis it does not name (a token axis, thinned for the phone as it is) is not read."""
    notes = _titled(("head 1", 0.25), ("head 2", 0.75))
    axis = {"tickmode": "array", "tickvals": [1, 5], "ticktext": ["head 1", "head 2"], "range": [-1, 7],
            "tickangle": 0, "side": "top", "tickfont": {"size": 14}}
    ticks = {"data": [], "layout": {"margin": notes["layout"]["margin"], "xaxis": axis,
                                    "meta": {TITLE_AXES: ["xaxis"]}}}
    assert phone_width(ticks) == phone_width(notes) > 0
    ticks["layout"]["xaxis"]["domain"] = [0.0, 0.5]  # half as far apart: the plot needs twice the width
    assert phone_width(ticks) - 60 == pytest.approx(2 * (phone_width(notes) - 60), abs=1)
    assert phone_width({**ticks, "layout": {**ticks["layout"], "meta": {}}}) == 0
    assert phone_width({**ticks, "layout": {**ticks["layout"], "xaxis": {**axis, "range": None}}}) == 0


def test_the_phone_rule_and_its_width_agree():
    from explorer.kit import present

    assert f"min-width: {present.PHONE_CHART_PX}px" in present._PHONE_BOX  # a desk browser's narrow window
    frozen_grid = frozen(go.Figure(layout=_titled(*[(f"head {i}", (i - 0.5) / 12) for i in range(1, 13)])["layout"]))
    assert frozen_grid.__dict__["phone_width"] > present.PHONE_CHART_PX  # the runtime's figures carry it


@pytest.mark.parametrize("n", [10, 15, 30])
def test_a_charts_title_stands_above_its_top_axis_and_the_axis_title(n):
    """The length lesson's grids: "15 letters (never seen)" and the key axis's title "input letter read"
    above the slanted letters were drawn on one line, presenting.  Plotly sets the title by its top at
    `y` of the chart's height; the axis's labels and title reach up from the plot area."""
    import numpy as np

    from explorer.figures.margins import LINE, tick_reach
    from explorer.lessons.length.figures import attention_figure

    letters = [chr(ord("A") + i % 26) for i in range(n)]
    figure, _ = attention_figure(np.full((n + 1, n), 1 / n), letters, f"{n} letters (never seen)")
    spec = spec_of(figure)
    for fitted in (fit_margins(spec), enlarge_plotly(spec)):
        layout = fitted["layout"]
        axis, title = layout["xaxis"], layout["title"]
        title_bottom = (1 - title["y"]) * layout["height"] + LINE * title["font"]["size"]
        axis_title_px = (axis["title"].get("font") or layout["font"])["size"]
        reach = tick_reach(axis["ticktext"], axis["tickfont"]["size"], axis.get("tickangle") or 0)
        assert layout["margin"]["t"] - reach - LINE * axis_title_px >= title_bottom, (n, layout["margin"])
