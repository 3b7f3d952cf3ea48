"""explorer.views.positions against closed forms written out here, and the shuffle demo's claims."""

import math

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest
import torch

from explorer.figures.positions import line_chart, matrix_heatmap, panel_grid
from explorer.model.positional import alibi_slopes, t5_relative_buckets
from explorer.training.pretrained import load_model
from explorer.training.tasks import get_task
from explorer.views.positions import (
    DRAW_BUDGET,
    LEARNED_MODEL,
    SHIPPED_ENCODINGS,
    alibi_causal_bias,
    column_names,
    draw_plan,
    encoder_output,
    encoding_matrix,
    float64_encoder,
    learned_table,
    matrix_view,
    offset_explained_share,
    reversal_run,
    rope_offset_scores,
    rope_rotation_degrees,
    rope_vectors,
    shuffle_demo,
    shuffle_order,
    similarity,
    similarity_by_offset,
    square_plan,
    t5_exact_buckets,
    t5_offset_buckets,
    toeplitz_projection,
    wrapped_degrees,
)
from tests.support.apptest import plotly_array


def sinusoid(n, d, base):
    """The paper's formula, one entry at a time."""
    return np.array([[math.sin(p / base ** (2 * (j // 2) / d)) if j % 2 == 0 else
                      math.cos(p / base ** (2 * (j // 2) / d)) for j in range(d)] for p in range(n)])


# --- the matrix and what is drawn of it ----------------------------------------------------------------


@pytest.mark.parametrize("n, d, base", [(4, 4, 100.0), (30, 7, 10000.0), (1, 1, 10.0)])
def test_sinusoidal_matrix_is_the_formula(n, d, base):
    matrix = encoding_matrix("sinusoidal", n, d, base)
    np.testing.assert_allclose(matrix.values, sinusoid(n, d, base), rtol=0, atol=1e-12)
    assert matrix.base == base


def test_lecture_table_to_two_decimals():
    table = np.round(encoding_matrix("sinusoidal", 4, 4, 100.0).values, 2)
    assert table[1].tolist() == [0.84, 0.54, 0.10, 1.00]
    assert table.tolist() == [[0, 1, 0, 1], [0.84, 0.54, 0.10, 1.00], [0.91, -0.42, 0.20, 0.98],
                              [0.14, -0.99, 0.30, 0.96]]


def test_index_and_none_matrices():
    index = encoding_matrix("index", 5, 3).values
    assert index.tolist() == [[p] * 3 for p in range(5)]
    assert not encoding_matrix("none", 5, 3).values.any()


def test_learned_matrix_is_a_read_only_copy_of_the_shipped_table():
    module = load_model(LEARNED_MODEL).model.encoder.position
    before = module.table.detach().clone()
    matrix = encoding_matrix("learned", 3, 3)  # the sizes asked for do not apply
    np.testing.assert_array_equal(matrix.values, before.double().numpy())
    assert matrix.values.shape == (11, 64)
    with pytest.raises(ValueError):
        matrix.values[0, 0] = 1.0
    assert learned_table() is matrix.values
    assert module.table.dtype == torch.float32 and torch.equal(module.table, before)


@pytest.mark.parametrize("args", [("rotary", 4, 4), ("sinusoidal", 0, 4), ("sinusoidal", 4, 1025),
                                  ("index", 1025, 4)])
def test_encoding_matrix_rejects_bad_arguments(args):
    with pytest.raises(ValueError):
        encoding_matrix(*args)


def test_column_names_give_the_function_of_each_column():
    assert column_names(4, 100.0) == ["0: sin(p/1)", "1: cos(p/1)", "2: sin(p/10)", "3: cos(p/10)"]
    assert column_names(2, None) == ["dim 0", "dim 1"]


@pytest.mark.parametrize("n, d", [(4, 4), (100, 512), (256, 256), (1024, 1024), (1024, 1), (1, 1024), (300, 301),
                                  (1000, 7)])
def test_draw_plan_stays_within_budget_with_odd_column_steps(n, d):
    plan = draw_plan(n, d)
    rows, cols = plan.rows, plan.cols
    assert len(rows) * len(cols) <= DRAW_BUDGET
    assert plan.col_step % 2 == 1, "an odd step keeps both sine and cosine columns"
    assert rows[0] == 0 and cols[0] == 0 and np.all(np.diff(rows) == plan.row_step)
    assert plan.downsampled == (n * d > DRAW_BUDGET)
    if plan.downsampled:
        assert len(rows) * len(cols) > DRAW_BUDGET // 4, "no needless thinning"
    parities = set(cols % 2)
    assert parities == ({0, 1} if d > 1 else {0})


def test_draw_plan_of_the_largest_matrix():
    plan = draw_plan(1024, 1024)
    assert (plan.row_step, plan.col_step) == (4, 5) and plan.shape == (256, 205)


def test_square_plan():
    assert square_plan(10).tolist() == list(range(10))
    assert len(square_plan(1024)) == 256 and square_plan(1024)[1] == 4
    assert len(square_plan(300)) <= 256


# --- geometry ------------------------------------------------------------------------------------------


def test_similarity_dot_and_cosine():
    pe = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    np.testing.assert_allclose(similarity(pe), pe @ pe.T)
    cosine = similarity(pe, measure="cosine")
    assert cosine[0, 1] == pytest.approx(1 / math.sqrt(2))
    assert np.isnan(cosine[2]).all() and np.isnan(cosine[:, 2]).all()
    np.testing.assert_allclose(similarity(pe, np.array([1, 0])), [[2.0, 1.0], [1.0, 1.0]])


def test_sinusoidal_similarity_is_the_cosine_sum_of_the_offset():
    n, d, base = 40, 16, 10000.0
    sim = similarity(encoding_matrix("sinusoidal", n, d, base).values)
    omega = base ** (-np.arange(0, d, 2) / d)
    offsets = np.arange(n)[:, None] - np.arange(n)[None, :]
    np.testing.assert_allclose(sim, np.cos(offsets[..., None] * omega).sum(-1), atol=1e-10)
    assert offset_explained_share(sim) == pytest.approx(1.0, abs=1e-12)
    curves = similarity_by_offset(encoding_matrix("sinusoidal", n, d, base).values, [0, 13])
    np.testing.assert_allclose(curves[13], curves[0][: n - 13], atol=1e-10)


def test_toeplitz_projection_averages_each_diagonal():
    m = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    expected = np.array([[3.0, 4.0, 3.0], [4.0, 3.0, 4.0]])  # diagonals: {4}, {1, 5}, {2, 6}, {3}
    np.testing.assert_allclose(toeplitz_projection(m), expected)
    np.testing.assert_allclose(toeplitz_projection(expected), expected)
    with_nan = np.array([[1.0, np.nan], [2.0, 3.0]])
    projected = toeplitz_projection(with_nan)
    assert np.isnan(projected[0, 1]) and projected[1, 1] == 2.0


def test_offset_explained_share():
    rng = np.random.default_rng(0)
    toeplitz = toeplitz_projection(rng.standard_normal((20, 20)))
    assert offset_explained_share(toeplitz) == pytest.approx(1.0)
    by_row = np.repeat(np.arange(20.0)[:, None], 20, axis=1) + np.arange(20.0)[None, :]  # p + s
    share = offset_explained_share(by_row)
    assert 0.0 <= share < 0.05, "p + s is constant along anti-diagonals, not diagonals"
    assert offset_explained_share(np.ones((5, 5))) is None
    learned = offset_explained_share(similarity(learned_table()))
    assert 0.0 < learned < 0.99


# --- relative schemes ------------------------------------------------------------------------------------


def test_wrapped_degrees():
    angles = np.array([0.0, math.pi, -math.pi, 3 * math.pi / 2, 10.0])
    wrapped = wrapped_degrees(angles)
    assert np.all((wrapped > -180) & (wrapped <= 180))
    np.testing.assert_allclose(np.mod(wrapped - np.degrees(angles), 360.0) % 360.0, 0.0, atol=1e-9)
    assert wrapped[1] == 180.0 and wrapped[2] == 180.0 and wrapped[3] == pytest.approx(-90.0)


def test_rope_rotation_degrees():
    degrees = rope_rotation_degrees(5, 4, 100.0)
    assert degrees.shape == (5, 2)
    assert degrees[1, 0] == pytest.approx(math.degrees(1.0))
    assert degrees[3, 1] == pytest.approx(math.degrees(3 / 10))


@pytest.mark.parametrize("kind", ["ones", "random"])
def test_rope_scores_are_the_closed_form_of_the_offset(kind):
    head_dim, base = 8, 10000.0
    q, k = rope_vectors(head_dim, kind)
    offsets = np.arange(-20, 21)
    scores = rope_offset_scores(q, k, [0, 7, 300], offsets, base)
    theta = base ** (-np.arange(0, head_dim, 2) / head_dim)
    phi = offsets[:, None] * theta[None, :]
    q0, q1, k0, k1 = q[0::2], q[1::2], k[0::2], k[1::2]
    expected = ((q0 * k0 + q1 * k1) * np.cos(phi) + (q1 * k0 - q0 * k1) * np.sin(phi)).sum(-1)
    for row in scores:
        np.testing.assert_allclose(row, expected, atol=1e-10)
    if kind == "ones":
        np.testing.assert_allclose(scores[0], 2 * np.cos(phi).sum(-1), atol=1e-10)


def test_rope_vectors():
    q, k = rope_vectors(6, "random", seed=3)
    q2, _ = rope_vectors(6, "random", seed=3)
    np.testing.assert_array_equal(q, q2)
    assert not np.array_equal(q, k)
    with pytest.raises(ValueError):
        rope_vectors(6, "zeros")


@pytest.mark.parametrize("heads", [1, 4, 6])
def test_alibi_causal_bias_is_minus_slope_times_distance(heads):
    T = 6
    bias = alibi_causal_bias(heads, T)
    slopes = alibi_slopes(heads)
    for h in range(heads):
        for q in range(T):
            for k in range(T):
                if k > q:
                    assert np.isnan(bias[h, q, k])
                else:
                    assert bias[h, q, k] == pytest.approx(-slopes[h] * (q - k))


@pytest.mark.parametrize("bidirectional", [True, False])
def test_t5_offset_buckets_match_the_matrix(bidirectional):
    offsets, buckets = t5_offset_buckets(40, bidirectional, 16, 64)
    assert offsets.tolist() == list(range(-40, 41))
    matrix = t5_relative_buckets(41, None, bidirectional, 16, 64)  # row 40: offsets −40 … 0
    np.testing.assert_array_equal(buckets[:41], matrix[40])
    np.testing.assert_array_equal(buckets[40:], matrix[0])  # row 0: offsets 0 … 40
    assert buckets[40] == 0
    if not bidirectional:
        assert np.all(buckets[41:] == 0), "a causal scheme puts every later key in bucket 0"


def test_t5_exact_buckets_and_the_distances_that_work():
    assert t5_exact_buckets(32, True) == 8 and t5_exact_buckets(32, False) == 16
    for buckets in (8, 16, 32, 64):
        for bidirectional in (True, False):
            exact = t5_exact_buckets(buckets, bidirectional)
            with np.errstate(all="raise"):  # beyond `exact` the logarithmic buckets are well defined
                _, b = t5_offset_buckets(300, bidirectional, buckets, 2 * exact)
            assert b.min() >= 0 and b.max() < buckets


# --- the shuffle demo ------------------------------------------------------------------------------------


def test_shuffle_order_is_a_reproducible_non_identity_permutation():
    for n in (2, 3, 7, 10):
        for seed in range(20):
            order = shuffle_order(n, seed)
            assert sorted(order.tolist()) == list(range(n))
            assert order.tolist() != list(range(n))
            assert np.array_equal(order, shuffle_order(n, seed))
    assert shuffle_order(1, 0).tolist() == [0]


def test_encoder_output_matches_the_models_own_forward():
    loaded = load_model("reverse-sinusoidal-h4-l2")
    task = get_task("reverse")
    ids = torch.tensor([task.encode(list("HELLO"))])
    _, trace = loaded.model(ids, torch.tensor([[task.index["<s>"]]]))
    expected = loaded.model.encoder.final_norm(trace.encoder_layers[-1].hidden)
    torch.testing.assert_close(encoder_output(loaded.model.encoder, ids), expected)


@pytest.mark.parametrize("encoding", SHIPPED_ENCODINGS)
def test_shuffle_moves_rows_unchanged_only_without_usable_positions(encoding):
    model = load_model(f"reverse-{encoding}-h4-l2").model
    first_weight = next(model.parameters()).detach().clone()
    result = shuffle_demo(encoding, tuple("ABCDEFG"), 0)
    assert result.before.dtype == np.float64
    np.testing.assert_array_equal(result.difference, result.after - result.before[result.order])
    assert result.shuffled_tokens == [result.tokens[i] for i in result.order]
    if encoding in ("none", "index"):  # index: LayerNorm removes a constant added to every dimension
        assert result.max_abs_difference < 1e-12
        np.testing.assert_allclose(result.after, result.before[result.order], rtol=0, atol=1e-12)
    else:
        assert result.max_abs_difference > 1e-3
    # The shared model is untouched: still float32, same weights.
    assert next(model.parameters()).dtype == torch.float32
    assert torch.equal(next(model.parameters()), first_weight)


def test_alibi_encoder_cannot_tell_a_sequence_from_its_mirror_image():
    """ALiBi's encoder bias depends on |q − k| only, so mirroring the input mirrors the output."""
    tokens = tuple("ABCDEFG")
    ids = torch.tensor([get_task("reverse").encode(list(tokens))])
    encoder = float64_encoder("alibi")
    forward, backward = encoder_output(encoder, ids)[0], encoder_output(encoder, ids.flip(1))[0]
    torch.testing.assert_close(backward, forward.flip(0), rtol=0, atol=1e-12)
    assert reversal_run("alibi", tokens).answer == reversal_run("alibi", tokens[::-1]).answer
    sinusoidal = float64_encoder("sinusoidal")
    assert (encoder_output(sinusoidal, ids.flip(1))[0] - encoder_output(sinusoidal, ids)[0].flip(0)).abs().max() > 1e-3


def test_reversal_runs_none_fails_and_sinusoidal_succeeds():
    tokens = tuple("ABCDEFG")
    sinusoidal, none = reversal_run("sinusoidal", tokens), reversal_run("none", tokens)
    assert sinusoidal.correct and sinusoidal.answer == [*"GFEDCBA", "</s>"]
    assert not none.correct
    assert sinusoidal.heldout_accuracy == pytest.approx(1.0) and none.heldout_accuracy < 0.2
    weights = sinusoidal.view.blocks[2].weights
    np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-6)


# --- matrix_view: what sections 1 and 2 of the page draw ---------------------------------------------------------


def test_matrix_view_small_and_large():
    small = matrix_view("sinusoidal", 4, 4, 100.0, "dot")
    np.testing.assert_allclose(small.table, sinusoid(4, 4, 100.0), atol=1e-12)
    np.testing.assert_array_equal(small.drawn, small.table)
    assert small.offset_share == pytest.approx(1.0)
    np.testing.assert_allclose(small.wavelengths, [2 * math.pi, 2 * math.pi * 10])
    large = matrix_view("sinusoidal", 1024, 1024, 10000.0, "cosine")
    assert large.table is None and large.drawn.shape == (256, 205) and large.similarity.shape == (256, 256)
    np.testing.assert_allclose(large.drawn, sinusoid(1024, 1024, 10000.0)[::4, ::5], atol=1e-12)
    np.testing.assert_allclose(np.diag(large.similarity), 1.0, atol=1e-12)
    assert set(large.curves) == {0, 341, 682}
    assert matrix_view("sinusoidal", 1024, 1024, 10000.0, "cosine") is large, "cached"
    with pytest.raises(ValueError):
        large.drawn[0, 0] = 2.0
    assert matrix_view("learned", 1, 1, 10.0, "dot").wavelengths is None


# --- figure builders: every spec passes Plotly's / Vega-Lite's full validation --------------------------------------


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
    assert "layer" not in spec, "one chart: layers cost several times more per rerun"
