"""AppTest: the depth page (residual connections, Add & Norm), read back from the chart data."""

import numpy as np
import pytest

from explorer.analysis.depth import layer_gradient_norms
from harness.apptest import info_text, plotly_array, plotly_figures, run_page, vega_data

PAGE = "explorer/lessons/depth/depth.py"




def line(at, configuration: str) -> np.ndarray:
    data = vega_data(at, 0)
    return data[data["configuration"] == configuration].sort_values("layer")["log10 norm"].to_numpy(dtype=float)


def test_default_view_without_residual_or_norm_the_gradient_vanishes_with_depth():
    at = run_page(PAGE)
    assert not at.info
    data = vega_data(at, 0)
    assert len(data) == 6 * 12 and set(data["seeds"]) == {3}
    plain = line(at, "no LayerNorm, without residual")
    assert plain[-1] - plain[0] > 5, "a plain deep stack starves its first layers"
    for configuration in ("no LayerNorm, with residual", "post-norm, with residual", "pre-norm, with residual"):
        values = line(at, configuration)
        assert np.ptp(values) < 1, f"{configuration}: the short cut keeps the gradient within one order"
    # What is drawn is the mean of log10 over the seeds of the library function.
    expected = np.mean([np.log10(layer_gradient_norms(12, 32, residual=False, norm="post", seed=s, T=16))
                        for s in range(3)], axis=0)
    # The page's pass runs in float32 (tests/unit/test_depth_view.py): log10 within 1e-3 (0.2 % in the norm).
    np.testing.assert_allclose(line(at, "post-norm, without residual"), expected, rtol=0, atol=1e-3)
    heat = plotly_array(plotly_figures(at)[0]["data"][0]["z"])
    assert heat.shape == (6, 12)
    np.testing.assert_allclose(heat[-1], plain, rtol=1e-12)  # rows in the chart's order: "none, without" last
    table = at.dataframe[0].value
    row = table[table["configuration"] == "no LayerNorm, without residual"].iloc[0]
    assert row["orders lost"] == pytest.approx(plain[-1] - plain[0], abs=0.051)


def test_controls_change_the_stack():
    at = run_page(PAGE, {"layers": "24", "width": "16", "T": "8", "seeds": "1"})
    assert not at.info
    data = vega_data(at, 0)
    assert len(data) == 6 * 24 and set(data["seeds"]) == {1}
    at.slider(key="layers").set_value(3).run()
    assert len(vega_data(at, 0)) == 6 * 3
    assert [b.proto.label for b in at.get("download_button")] == ["Download the curves (CSV)"]


@pytest.mark.parametrize(
    "params, expected_in_note",
    [({"layers": "25"}, "Layers"), ({"width": "48"}, "Width"), ({"T": "x"}, "Sequence length"),
     ({"seeds": "-1"}, "Random seeds"), ({"norm": "pre"}, "norm")],
)
def test_bad_url_values_fall_back_with_a_note(params, expected_in_note):
    at = run_page(PAGE, params)
    assert expected_in_note in info_text(at)
    assert len(vega_data(at, 0)) == 6 * 12


def test_one_layer_is_refused_with_a_note_it_has_no_depth_to_show():
    """One layer drew an empty chart (a point per line) beside a sentence about the dashed line."""
    at = run_page(PAGE, {"layers": "1"})
    assert "a number from 2 to 24" in info_text(at)
    assert [s.value for s in at.slider if s.label == "Layers"] == [12]
