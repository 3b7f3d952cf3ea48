"""explorer.figures.attention: the layer × head grid and one head's pipeline pass Plotly's full
validation, share their colour scales, and stay small at the largest settings."""

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.figures import attention as figures
from explorer.figures.common import DIVERGING, colour_list, heatmap
from tests.support.apptest import plotly_array

TOKENS = ["<s>", "the", "cat", "the", "</s>"]


def validated(fig: go.Figure) -> dict:
    """Rebuild the figure with validation on (raises on any invalid property) and return its dict."""
    return go.Figure(fig.to_dict()).to_dict()


@pytest.mark.parametrize("layers, heads", [(1, 1), (2, 4), (3, 8)])
def test_attention_grid_is_valid_with_one_shared_colour_scale(layers, heads):
    weights = np.random.default_rng(0).random((layers, heads, 5, 5))
    spec = validated(figures.attention_grid(weights, TOKENS, TOKENS, selected=(layers - 1, heads - 1)))
    assert len(spec["data"]) == layers * heads
    assert {trace["coloraxis"] for trace in spec["data"]} == {"coloraxis"}
    assert spec["layout"]["coloraxis"]["cmin"] == 0 and spec["layout"]["coloraxis"]["cmax"] == 1
    for i, trace in enumerate(spec["data"]):
        np.testing.assert_array_equal(plotly_array(trace["z"]), weights[i // heads, i % heads].astype(np.float32))
    assert len(spec["layout"]["shapes"]) == 1


def test_pipeline_draws_masked_cells_blank():
    raw = np.arange(25, dtype=float).reshape(5, 5)
    masked = np.where(np.tril(np.ones((5, 5))) > 0, raw / 2, -np.inf)
    spec = validated(figures.attention_pipeline_figure(raw, raw / 2, masked, np.eye(5), TOKENS, TOKENS, 4))
    mask_panel = plotly_array(spec["data"][2]["z"])
    assert np.all(np.isnan(np.triu(mask_panel, 1)[np.triu_indices(5, 1)]))
    assert spec["data"][3]["coloraxis"] == "coloraxis2"


def test_specs_carry_explicit_colour_lists_not_names():
    """plotly.js does not know every scale name (PuOr falls back to red–blue without validation)."""
    z = np.array([[-1.0, 1.0]])
    figs = [heatmap(z, x_labels=["a", "b"], y_labels=["q"], colorscale=DIVERGING),
            figures.attention_pipeline_figure(z, z, z, np.array([[0.5, 0.5]]), ["q"], ["a", "b"], 2),
            figures.attention_grid(np.ones((1, 1, 1, 2)) / 2, ["q"], ["a", "b"])]
    for fig in figs:
        spec = fig.to_plotly_json()
        scales = [t.get("colorscale") for t in spec["data"] if "colorscale" in t]
        scales += [v["colorscale"] for k, v in spec["layout"].items() if k.startswith("coloraxis")]
        assert scales and all(isinstance(s, list) and len(s) > 2 for s in scales)
    purple_orange = colour_list(DIVERGING)
    assert purple_orange[0][1] != purple_orange[-1][1]


def test_a_grid_at_the_largest_settings_stays_small():
    """129 tokens × 4 layers × 8 heads: token-pair hover strings were 18 MB; now a few MB of floats."""
    weights = np.random.default_rng(0).random((4, 8, 129, 129))
    tokens = [f"t{i}" for i in range(129)]
    size = len(figures.attention_grid(weights, tokens, tokens).to_json())
    assert size < 4_000_000, size
    small = figures.attention_grid(weights[:1, :2, :10, :10], tokens[:10], tokens[:10]).to_plotly_json()
    assert "customdata" in small["data"][0], "small grids keep token-pair hover labels"
