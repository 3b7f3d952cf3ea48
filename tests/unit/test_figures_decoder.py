"""explorer.lessons.decoder.charts: every builder passes Plotly's full validation and draws what it is handed."""

import re

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.lessons.decoder import charts as figures
from harness.apptest import plotly_array


def validated(fig: go.Figure) -> dict:
    return go.Figure(fig.to_dict()).to_dict()


@pytest.mark.parametrize("cross", [True, False])
def test_step_figure(cross):
    self_weights = np.full((3, 4), np.nan)
    self_weights[0, :1], self_weights[1, :2] = [1.0], [0.3, 0.7]
    cross_weights = np.full((3, 5), np.nan)
    cross_weights[:2] = 0.2
    spec = validated(figures.step_figure(["B", "A", "<s>"], [0.9, 0.07, 0.03], "B", self_weights, ["<s>", "B", "?"],
                                         ["<s>", "B", "?", "?"], cross_weights if cross else None, list("ABCDE"), 1))
    assert len(spec["data"]) == (3 if cross else 2)
    bars = spec["data"][0]
    assert bars["marker"]["color"][0] == figures.PUT_IN and bars["customdata"][2] == "&lt;s&gt;"
    z = plotly_array(spec["data"][1]["z"])
    np.testing.assert_allclose(z[1, :2], [0.3, 0.7], rtol=1e-6)
    assert np.isnan(z[2]).all()
    frames = spec["layout"]["shapes"]
    assert len(frames) == (2 if cross else 1) and frames[0]["y0"] == 0.5 and frames[0]["y1"] == 1.5


def test_forcing_figure_colours_right_and_wrong():
    rows = [("free running writes", ["A", "B", "C"], [True, False, False]),
            ("teacher forcing writes", ["A", "B", "E"], [True, False, True]),
            ("no answer", ["x", "y", "z"], [None, None, None])]
    spec = validated(figures.forcing_figure(rows, ["step 1", "step 2", "step 3"], 1))
    z = spec["data"][0]["z"]
    assert [list(r) for r in z] == [[1.0, 0.0, 0.0], [1.0, 0.0, 1.0], [0.5, 0.5, 0.5]]
    assert spec["layout"]["shapes"][0]["x0"] == 0.5
    assert not validated(figures.forcing_figure(rows, ["1", "2", "3"], None))["layout"].get("shapes")


def test_line_figure():
    spec = validated(figures.line_figure([1, 2, 3], {"a": [1.0, np.nan, 3.0], "b": [0.5, 0.5, 0.5]}, x_title="step",
                                         y_title="loss", title="t", marker_x=2, dashes={"b": "dash"}))
    assert spec["data"][0]["y"][1] is None and spec["data"][1]["line"]["dash"] == "dash"
    assert spec["layout"]["shapes"][0]["x0"] == 2
    assert spec["layout"]["yaxis"]["exponentformat"] == "power", "a loss of 0.00006 reads 6×10⁻⁵, never 60µ"
    tiny = validated(figures.line_figure([1, 2], {"a": [6e-5, 2e-5]}, x_title="step", y_title="loss", log_y=True))
    assert tiny["layout"]["yaxis"]["exponentformat"] == "power"


@pytest.mark.parametrize("n_source, position, new", [(5, 2, 1), (0, 6, 1), (0, 5, 6)])
def test_cache_figure_marks_what_each_step_computes_and_keeps(n_source, position, new):
    spec = validated(figures.cache_figure(2, n_source, position, new))
    without, with_cache = (plotly_array(trace["z"]) for trace in spec["data"])
    rows = (4 if n_source else 2) + 1
    assert without.shape[0] == with_cache.shape[0] == rows
    decoder_rows = slice(2 if n_source else 0, rows - 1)
    assert np.all(without[decoder_rows, :position + 1] == figures.COMPUTED)
    assert np.all(with_cache[decoder_rows, position + 1 - new:position + 1] == figures.COMPUTED)
    assert np.all(with_cache[decoder_rows, :position + 1 - new] == figures.KEPT)
    if n_source:
        # the encoder ran once before step 1, with the cache or without
        assert np.all(without[:2, :n_source] == figures.KEPT) and np.all(with_cache[:2, :n_source] == figures.KEPT)
    assert with_cache[-1, position] == figures.COMPUTED and np.isnan(with_cache[-1, position + 1:]).all()


@pytest.mark.parametrize("layers, drawn", [(1, 1), (2, 2), (6, 3)])
def test_architecture_figure(layers, drawn):
    spec = validated(figures.architecture_figure(layers))
    fills = [s.get("fillcolor") for s in spec["layout"]["shapes"]]
    colours = figures.BLOCK_COLOURS
    assert fills.count(colours["self-attention"]) == 2 * drawn  # encoder-only and the encoder
    assert fills.count(colours["masked self-attention"]) == 2 * drawn  # decoder-only and the decoder
    assert fills.count(colours["cross-attention"]) == drawn
    arrows = [a for a in spec["layout"]["annotations"] if a.get("showarrow")]
    assert len(arrows) == drawn
    assert f"{layers} layer" in spec["layout"]["title"]["text"]


def test_sweep_figure_draws_both_ways_per_shape_and_stars_only_a_crossover():
    from explorer.analysis.kv_timing import CacheSweep

    lengths = np.array([2, 4, 8, 16])
    wins = CacheSweep(64, 2, 4, lengths, np.array([1, 2, 4, 8]) / 1e3, np.array([2, 2, 2, 2]) / 1e3, 5, "thread_time")
    never = CacheSweep(256, 2, 4, lengths, np.array([1, 1, 1, 1]) / 1e3, np.array([2, 2, 2, 2]) / 1e3, 5)
    spec = validated(figures.sweep_figure([wins, never], 6))
    lines = [t for t in spec["data"] if t["mode"] == "lines+markers"]
    assert [t["name"] for t in lines] == ["d=64, 2 layers, without the cache", "d=64, 2 layers, with the cache",
                                          "d=256, 2 layers, without the cache", "d=256, 2 layers, with the cache"]
    np.testing.assert_allclose(list(lines[0]["y"]), [1, 2, 4, 8])  # milliseconds
    stars = [t for t in spec["data"] if t["mode"] == "markers"]
    assert len(stars) == 1 and stars[0]["name"] == "d=64, 2 layers: the cache wins from T = 8"
    assert list(stars[0]["x"]) == [8] and list(stars[0]["y"]) == [2.0]
    assert spec["layout"]["shapes"][0]["x0"] == 6 and "(CPU time)" in spec["layout"]["yaxis"]["title"]["text"]
    assert list(spec["layout"]["xaxis"]["tickvals"]) == [2, 4, 8, 16]


def test_the_step_figure_fits_a_phone_chart_and_its_titles_on_lines_are_measured_by_the_longest():
    """Its three titles on one line needed a 1049 px chart on a phone (seen at 390 px); on two lines they fit
    the phone's 600 px, and the gaps hold the next panel's row labels ("<s>")."""
    import numpy as np

    from explorer.figures.common import FrozenFigure
    from explorer.figures.margins import PHONE_GRID_PX, label_width, phone_width
    from explorer.kit.present import PHONE_CHART_PX
    from explorer.lessons.decoder.charts import step_figure

    figure = step_figure(list("OILNG"), [1, 0, 0, 0, 0], "O", np.eye(8)[:, :6], ["<s>", *"?" * 7], ["<s>", *"?" * 5],
                         np.eye(8)[:, :5], list("HELLO"), 0)
    assert 0 < FrozenFigure(figure).phone_width <= PHONE_CHART_PX
    layout = figure.to_dict()["layout"]
    for left, right in (("xaxis", "xaxis2"), ("xaxis2", "xaxis3")):
        assert (layout[right]["domain"][0] - layout[left]["domain"][1]) * PHONE_GRID_PX >= label_width("<s>", 16) + 12
    two_lines = {"layout": {"margin": {"l": 0, "r": 0}, "annotations": [
        {"text": "aaaa<br>b", "x": 0.25, "y": 1}, {"text": "c<br>dddd", "x": 0.75, "y": 1}]}}
    assert phone_width(two_lines) == phone_width({"layout": {"margin": {"l": 0, "r": 0}, "annotations": [
        {"text": "aaaa", "x": 0.25, "y": 1}, {"text": "dddd", "x": 0.75, "y": 1}]}})


@pytest.mark.parametrize("layers", [1, 2, 6])
def test_architecture_figure_prints_each_architectures_parameters_above_its_stack(layers):
    """Steps 7-8 quote the counts and the share: the figure prints them, over each first stack, between its
    top and the titles; presenting keeps the figure's top margin (an annotation without xref and yref was
    taken for a title standing on the plot, and the plot squashed to its foot)."""
    from explorer.figures.margins import label_width
    from explorer.figures.presentation import enlarge_plotly

    counts = [(1_234_567, 0.43, 1_000_000, 234_567), (102_547, 0.43, 100_096, 2_451), (237_395, None, 233_728, 3_667)]
    spec = validated(figures.architecture_figure(layers, counts=counts))
    notes = [a for a in spec["layout"]["annotations"] if "layers" in a.get("text", "")]
    assert [n["text"] for n in notes] == [
        "<b>1.2 M</b> · <b>43%</b><br>layers 1.0 M<br>embeddings and<br>output 234,567",
        "<b>102,547</b> · <b>43%</b><br>layers 100,096<br>embeddings and<br>output 2,451",
        "<b>237,395</b><br>layers 233,728<br>embeddings and<br>output 3,667"]
    assert spec["layout"]["title"]["text"].endswith("; parameters over each")
    # side by side in a phone's 600 px chart: each line narrower than the columns' spacing there
    per_unit = (600 - 20) / (14.7)
    assert all(label_width(re.sub("<[^>]+>", "", line), n["font"]["size"]) + 8 < 3.7 * per_unit
               for n in notes for line in n["text"].split("<br>"))
    tops = [s["y1"] for s in spec["layout"]["shapes"] if s["x0"] in (0.0, 3.7, 7.5)]
    titles = [a["y"] for a in spec["layout"]["annotations"] if a.get("text", "").startswith("<b>encoder")]
    assert all(max(tops) < n["y"] < min(titles) for n in notes)
    assert notes[2]["xanchor"] == "right" and notes[2]["x"] < 10.5, "left of the arrows from the encoder's top"
    assert enlarge_plotly(spec)["layout"]["margin"]["t"] == spec["layout"]["margin"]["t"]
