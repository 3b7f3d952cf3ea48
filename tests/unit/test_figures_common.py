"""explorer.figures.common: every spec passes Plotly's full validation (the app skips it per rerun),
tokens are shown as written, and matrices are drawn as given."""

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.figures import common as figures
from harness.apptest import plotly_array

TOKENS = ["<s>", "the", "cat", "the", "</s>"]


def validated(fig: go.Figure) -> dict:
    """Rebuild the figure with validation on (raises on any invalid property) and return its dict."""
    return go.Figure(fig.to_dict()).to_dict()


def test_heatmap_is_valid_keeps_repeated_tokens_and_escapes_html():
    z = np.arange(25, dtype=float).reshape(5, 5)
    spec = validated(figures.heatmap(z, x_labels=TOKENS, y_labels=TOKENS, title="t"))
    assert spec["layout"]["xaxis"]["ticktext"] == ["&lt;s&gt;", "the", "cat", "the", "&lt;/s&gt;"]
    assert spec["layout"]["xaxis"]["tickvals"] == [0, 1, 2, 3, 4], "numeric axis: repeated tokens stay apart"
    np.testing.assert_array_equal(plotly_array(spec["data"][0]["z"]), z)


def test_heatmap_rejects_labels_that_do_not_fit():
    with pytest.raises(ValueError):
        figures.heatmap(np.zeros((2, 3)), x_labels=["a", "b"], y_labels=["a", "b"])


def test_matrix_csv_has_labels_and_values():
    text = figures.matrix_csv(np.array([[0.25, 0.75]]), ["q"], ["k1", "k2"], corner="query")
    assert text.splitlines() == ["query,k1,k2", "q,0.25,0.75"]


def test_bar_chart_is_valid_and_leaves_room_for_labels_on_both_sides():
    spec = validated(figures.bar_chart(["<s>", "b"], [-10.0, 2.0], title="t", value_title="score"))
    low, high = spec["layout"]["xaxis"]["range"]
    assert low < -10 and high > 2
    assert spec["data"][0]["text"] == ["-10.00", "2.00"]
    assert spec["layout"]["yaxis"]["ticktext"] == ["&lt;s&gt;", "b"]


def test_colour_list_resolves_names_to_stops():
    assert figures.colour_list("PuOr")[0] == [0.0, "rgb(127,59,8)"] and figures.colour_list("Viridis")[-1][0] == 1.0


def test_value_axes_and_colour_bars_never_get_si_prefixes():
    """Plotly's default tick format writes 0.00006 as "60µ"; the value axes write 6×10⁻⁵."""
    bars = validated(figures.bar_chart(["a", "b"], [6e-5, 2e-5], title="t", value_title="probability"))
    assert bars["layout"]["xaxis"]["exponentformat"] == "power"
    spec = validated(figures.heatmap(np.full((2, 2), 3e-5), x_labels=["a", "b"], y_labels=["a", "b"]))
    assert spec["data"][0]["colorbar"]["exponentformat"] == "power"
