"""explorer.lessons.cost.figures: the bars pass Plotly's full validation, the charts validate against the
Vega-Lite schema, and the tables hold the counts and timings given."""

import re

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.analysis.timing import TIMED_LAYERS, Timing
from explorer.figures.common import frame_csv
from explorer.lessons.cost import figures
from explorer.lessons.cost.counts import complexity_rows, operations_curves, operations_lengths
from harness.contrast import contrast


def validated(fig: go.Figure) -> dict:
    return go.Figure(fig.to_dict()).to_dict()


def _panels(bars: dict) -> dict[str, dict]:
    """quantity → {"title", "values" (layer label → count), "texts" (layer label → printed text), "range"}."""
    layout, panels = bars["layout"], {}
    for at, quantity in enumerate(figures.COST_QUANTITIES):
        axis = "x" if at == 0 else f"x{at + 1}"
        traces = [t for t in bars["data"] if t["xaxis"] == axis]
        domain = layout["xaxis" if at == 0 else f"xaxis{at + 1}"]
        title = next(a["text"] for a in layout["annotations"] if a["x"] == domain["domain"][0]
                     and a["y"] == layout["yaxis" if at == 0 else f"yaxis{at + 1}"]["domain"][1])
        panels[quantity] = {"title": title, "values": {t["name"]: t["x"][0] for t in traces},
                            "texts": {t["name"]: t["text"][0] for t in traces}, "range": domain["range"]}
    return panels


def _read(text: str) -> float:
    """A printed count back as a number: '41.9\u00a0M' → 41.9e6, '8,320' → 8320."""
    number, _, unit = text.replace(",", "").partition("\u00a0")
    return float(number) * {"": 1, "k": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}[unit]


SIZES = [(512, 64, 3, 1), (64, 64, 3, 1), (16, 512, 3, 1), (4096, 64, 3, 1), (512, 64, 3, 6), (4096, 1024, 9, 24),
         (2, 8, 2, 1), (100, 32, 5, 3)]


@pytest.mark.parametrize(("T", "d", "k", "n"), SIZES)
def test_every_bar_prints_its_count_and_the_titles_attentions_ratio_to_the_rnn(T, d, k, n):
    """Linear bars (a bar ten times another is ten times as long), each count printed to three digits;
    the multiplications' and parameters' titles give attention's count over the RNN's as the closed forms
    give it: 2 + T/d multiplications (four T·d² projections and two T²·d products against two T·d²), and
    twice the parameters (four d × d projections with biases against two)."""
    bars = validated(figures.cost_bars(complexity_rows(T, d, k, n), n))
    panels = _panels(bars)
    for quantity, panel in panels.items():
        assert panel["range"][0] == 0 and max(panel["values"].values()) <= panel["range"][1]
        for layer, value in panel["values"].items():
            assert _read(panel["texts"][layer]) == pytest.approx(value, rel=0.005), (quantity, layer)
    assert [axis.get("type", "linear") for name, axis in bars["layout"].items() if name.startswith("xaxis")] \
        == ["linear"] * 4
    expected = {"multiplications": 2 + T / d, "parameters": 2.0}
    for quantity, ratio in expected.items():
        printed = re.fullmatch(rf"<b>{quantity}</b><br>attention ([0-9.]+)× RNN", panels[quantity]["title"])
        assert printed and float(printed.group(1)) == pytest.approx(ratio, abs=0.05 if ratio < 10 else 0.5)
    assert panels["sequential steps"]["title"] == "<b>sequential steps</b>"


def test_labels_are_upright_not_shrunk_and_fit_in_or_beside_their_bar_on_a_phone():
    """Turned 90° and four to a group they were hard to read from the back of the room: now flat, never
    shrunk to the bar, and the axis runs far enough past the longest bar that, at a phone's panel width,
    each label fits inside its bar or after it (estimated at 0.6 em a character)."""
    for T, d, k, n in SIZES:
        bars = validated(figures.cost_bars(complexity_rows(T, d, k, n), n))
        assert all(t["textangle"] == 0 and t["constraintext"] == "none" and t["orientation"] == "h"
                   and t["textposition"] == "auto" for t in bars["data"])
        for panel in _panels(bars).values():
            end = panel["range"][1]
            for layer, value in panel["values"].items():
                bar = value / end * figures.PHONE_PANEL_PX
                need = 0.6 * figures.FONT_SIZE * len(panel["texts"][layer]) + 8
                assert bar >= need or bar + need <= figures.PHONE_PANEL_PX, (T, d, layer, panel["texts"][layer])


def test_each_layer_has_an_okabe_ito_hue_of_its_own_and_its_labels_read_on_it():
    """CNN and RNN were orange and vermillion, one hue on a projector: now four of Okabe & Ito's colours,
    no two of the orange–vermillion pair, and a label inside a bar at least 4.5:1 against it (WCAG)."""
    okabe_ito = {"#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"}
    bars = validated(figures.cost_bars(complexity_rows(512, 64, 3, 1)))
    colours = {t["name"]: t["marker"]["color"] for t in bars["data"]}
    assert len(set(colours.values())) == 4 and set(colours.values()) <= okabe_ito
    assert not {"#E69F00", "#D55E00"} <= set(colours.values())
    for trace in bars["data"]:
        assert contrast(trace["marker"]["color"], trace["insidetextfont"]["color"]) >= 4.5, trace["name"]
        assert contrast("#FFFFFF", trace["outsidetextfont"]["color"]) >= 4.5


@pytest.mark.parametrize(("T", "k", "n_layers", "short"), [(512, 3, 6, True), (512, 3, 1, True), (9, 3, 4, False),
                                                          (17, 3, 8, False), (512, 3, 256, False)])
def test_a_stack_too_shallow_to_connect_the_ends_says_so_over_its_path_bar(T, k, n_layers, short):
    """Six convolutions (k = 3) see 13 of 512 positions: there is no path from the last output to the first
    input, and the bar's value is the 256 layers needed (the notes' O(T/k)).  Its hover says so; a deep
    enough stack's does not."""
    bars = validated(figures.cost_bars(complexity_rows(T, 16, k, n_layers), n_layers))
    path = [t for t in bars["data"] if t["xaxis"] == "x4"]
    cnn = next(t for t in path if t["name"].startswith("CNN"))
    assert ("cannot reach" in cnn["hovertemplate"]) == short and (cnn["x"][0] > n_layers) == short
    assert not any("cannot reach" in t["hovertemplate"] for t in bars["data"] if t is not cnn)


def test_cost_charts_and_table():
    rows = complexity_rows(100, 16, 3, 2)
    table = figures.complexity_frame(rows, 2)
    assert table["layer"].tolist()[0] == "CNN ×2" and table["exact"].tolist() == table["PyTorch count"].tolist()
    bars = validated(figures.cost_bars(rows))
    assert len(bars["data"]) == 16 and {t["name"] for t in bars["data"]} == set(table["layer"].str[:-3])
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
