"""explorer.lessons.real.charts: the 72-head overview, the pair with its difference and the per-head score
map pass Plotly's full validation and draw exactly the arrays they are handed."""

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.figures.presentation import enlarge_plotly
from explorer.lessons.real import charts as figures
from harness.apptest import plotly_array

TOKENS = ["[CLS]", "the", "<b>cat</b>", "the", "[SEP]"]  # a repeated token, and one plotly would read as HTML


def validated(fig: go.Figure) -> dict:
    return go.Figure(fig.to_dict()).to_dict()


@pytest.mark.parametrize("T", [2, 5, 32])
def test_overview_places_every_head_in_its_cell_with_blank_gaps(T):
    weights = np.random.default_rng(T).random((6, 12, T, T)).astype(np.float32)
    tokens = [TOKENS[i % len(TOKENS)] for i in range(T)]
    spec = validated(figures.head_overview(weights, tokens, selected=(5, 11)))
    assert [trace["type"] for trace in spec["data"]] == ["heatmap", "scatter"]  # the weights, the frame
    z = plotly_array(spec["data"][0]["z"])
    gap = max(1, round(T / 10))
    step = T + gap
    assert z.shape == (gap + 6 * step, gap + 12 * step)
    for layer, head in [(0, 0), (2, 7), (5, 11)]:
        row, col = gap + layer * step, gap + head * step
        np.testing.assert_array_equal(z[row:row + T, col:col + T], weights[layer, head])
    assert np.isnan(z[:gap]).all() and np.isnan(z[gap + T:step + gap]).all() and np.isnan(z[:, :gap]).all()
    x, y = spec["data"][0]["x"], spec["data"][0]["y"]
    assert len(set(x)) == len(x) == z.shape[1] and len(set(y)) == len(y) == z.shape[0]  # categories stay apart
    assert T < 3 or ("&lt;b&gt;" in " ".join(x) and "<b>" not in " ".join(x))
    frame = spec["data"][1]  # through the gap cells around layer 6, head 12
    assert set(frame["x"]) == {x[gap + 11 * step - 1], x[gap + 11 * step + T]}
    assert set(frame["y"]) == {y[gap + 5 * step - 1], y[gap + 5 * step + T]}
    assert len(validated(figures.head_overview(weights, tokens))["data"]) == 1  # nothing selected, no frame
    assert not spec["layout"].get("annotations")  # the titles are the axes' tick labels
    xaxis, yaxis = spec["layout"]["xaxis"], spec["layout"]["yaxis"]
    assert xaxis["side"] == "top" and xaxis["ticktext"] == [f"head {h}" for h in range(1, 13)]
    assert yaxis["ticktext"] == [f"layer {n}" for n in range(1, 7)] and yaxis["tickangle"] == 0, "upright row labels"
    for axis, n_panels, cells in ((xaxis, 12, x), (yaxis, 6, y)):  # each title at the middle of its panel
        assert len(axis["tickvals"]) == n_panels
        for p, at in enumerate(axis["tickvals"]):
            first = gap + p * step
            assert at == pytest.approx(first + (T - 1) / 2)
            assert {cells[first].split(":")[0], cells[first + T - 1].split(":")[0]} == {axis["ticktext"][p]}
    assert xaxis["range"] == [-0.5, len(x) - 0.5] and yaxis["range"] == [len(y) - 0.5, -0.5]  # layer 1 on top


def test_overview_fits_one_projected_screen_when_presenting():
    """Projected, the 6 × 12 grid is drawn at its presentation height (explorer.figures.presentation
    applies the figure's own), short enough to sit under the lesson's controls on a 1280×720 screen."""
    weights = np.random.default_rng(0).random((6, 12, 16, 16))
    spec = figures.head_overview(weights, [f"t{i}" for i in range(16)]).to_plotly_json()
    projected = enlarge_plotly(spec)
    assert projected["layout"]["height"] == 6 * figures.PRESENT_PANEL_PX + 60 <= 400 < spec["layout"]["height"]
    go.Figure(projected)  # still a valid figure


def test_pair_figure_shows_both_heads_and_their_difference():
    rng = np.random.default_rng(1)
    a, b = rng.random((5, 5)), rng.random((5, 5))
    spec = validated(figures.pair_figure(a, b, TOKENS, [*TOKENS[:-1], "[SEP]"], ("tired", "wide")))
    panels = [plotly_array(trace["z"]) for trace in spec["data"]]
    np.testing.assert_allclose(panels[0], a, rtol=1e-6)
    np.testing.assert_allclose(panels[1], b, rtol=1e-6)
    np.testing.assert_allclose(panels[2], a - b, rtol=1e-5, atol=1e-6)
    assert [t["coloraxis"] for t in spec["data"]] == ["coloraxis", "coloraxis", "coloraxis2"]
    bars = [spec["layout"][name]["colorbar"] for name in ("coloraxis", "coloraxis2")]
    assert [bar["title"]["side"] for bar in bars] == ["top", "top"], "titles above the bars, not along them"
    second_panel_end = spec["layout"]["xaxis2"]["domain"][1]
    assert second_panel_end < bars[0]["x"] < spec["layout"]["xaxis3"]["domain"][0] and bars[1]["x"] > 1
    assert bars[1]["exponentformat"] == "power", "a tiny difference reads 5×10⁻⁵, not 50µ"
    long = [f"token{i}" for i in range(17)]
    crowded = validated(figures.pair_figure(np.eye(17), np.eye(17), long, long, ("tired", "wide")))
    shown = crowded["layout"]["xaxis"]["tickvals"]
    assert 1 < len(shown) < 17 and crowded["layout"]["xaxis"]["tickangle"] == -45, "slanted, thinned to fit"
    bound = spec["layout"]["coloraxis2"]["cmax"]
    assert spec["layout"]["coloraxis2"]["cmin"] == -bound and bound == pytest.approx(np.abs(a - b).max())


def test_score_map_prints_percents_centred_on_chance():
    scores = np.linspace(0, 1, 72).reshape(6, 12)
    spec = validated(figures.head_score_map(scores, title="t", value_name="v", highlight=[(3, 3)]))
    trace = spec["data"][0]
    assert trace["zmid"] == 0.5 and trace["text"][5][11] == "100" and trace["text"][0][0] == "0"
    assert len(spec["layout"]["shapes"]) == 1
