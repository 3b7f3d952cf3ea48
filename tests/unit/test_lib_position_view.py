"""explorer.lessons.positions.encodings against closed forms written out here, and the shuffle demo's claims."""

import math

import numpy as np
import pytest
import torch

from explorer.lessons.positions import encodings
from explorer.lessons.positions import view as positions_view
from explorer.lessons.positions.encodings import (
    DRAW_BUDGET,
    LEARNED_MODEL,
    MINILM,
    SHIPPED_ENCODINGS,
    PretrainedModelError,
    column_names,
    draw_plan,
    encoder_output,
    encoding_matrix,
    float64_encoder,
    learned_table,
    matrix_view,
    mean_neighbour_cosine,
    offset_explained_share,
    reversal_run,
    shuffle_demo,
    shuffle_order,
    similarity,
    similarity_by_offset,
    square_plan,
    toeplitz_projection,
)
from explorer.lessons.positions.spec import POSITIONS
from explorer.lessons.positions.view import PositionSettings, position_view
from explorer.model.positional import t5_relative_buckets
from explorer.serve import runtime
from explorer.training.pretrained import load_model
from explorer.training.tasks import get_task


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


@torch.no_grad()
def hand_encoder_loop(stack, ids: torch.Tensor) -> torch.Tensor:
    """The loop encoder_output used to copy from the stack (issue #60), kept here as the reference: embed,
    the score bias cast to x's dtype, each layer without a mask, the final norm."""
    x = stack.embed_tokens(ids)
    bias = stack.score_bias(ids.shape[1], ids.device)
    if bias is not None:
        bias = bias.to(x.dtype)
    for layer in stack.layers:
        x, _ = layer(x, mask=None, bias=bias, rotary=stack.rotary)
    return stack.final_norm(x)


@pytest.mark.parametrize("encoding", SHIPPED_ENCODINGS)
def test_encoder_output_is_the_old_hand_loop_in_float64(encoding):
    """encoder_output now runs the stack's own forward (no mask): on the float64 copy of every shipped reversal
    encoder (ALiBi and T5 add a score bias, RoPE rotates q and k) it equals the hand loop to 1e-12, in float64."""
    encoder = float64_encoder(encoding)
    assert (encoding == "rope") == (encoder.rotary is not None)
    assert (encoding in ("alibi", "t5")) == (encoder.score_bias(3, "cpu") is not None)
    task = get_task("reverse")
    for word in ("ABCDEFG", "JABBEDCODE", "HELLO"):
        ids = torch.tensor([task.encode(list(word))])
        ours, reference = encoder_output(encoder, ids), hand_encoder_loop(encoder, ids)
        assert ours.dtype == reference.dtype == torch.float64 and ours.shape == (1, len(word), 64)
        assert float((ours - reference).abs().max()) <= 1e-12


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


def test_t5_encoder_tells_a_sequence_from_its_mirror_image():
    """T5's encoder bias has separate buckets for keys before and after the query (unlike ALiBi's |q − k|):
    mirroring the input does not mirror the output, and the model reverses both."""
    tokens = tuple("ABCDEFG")
    ids = torch.tensor([get_task("reverse").encode(list(tokens))])
    encoder = float64_encoder("t5")
    forward, backward = encoder_output(encoder, ids)[0], encoder_output(encoder, ids.flip(1))[0]
    assert (backward - forward.flip(0)).abs().max() > 1e-3
    table = encoder.t5_bias.bias.weight
    after, before = t5_relative_buckets(1, 3)[0, 2], t5_relative_buckets(3, 1)[2, 0]  # key 2 after, 2 before
    assert (after, before) == (18, 2) and not torch.equal(table[after], table[before])
    assert reversal_run("t5", tokens).correct and reversal_run("t5", tokens[::-1]).correct


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
    # Cached once, by the lesson runtime, keyed by the lesson's settings (matrix_view itself keeps nothing).
    settings = PositionSettings(n_positions=1024, d_model=1024, base=10000, measure="cosine")
    shown = runtime.shown(POSITIONS, settings)
    np.testing.assert_array_equal(shown.view.matrix.drawn, large.drawn)
    assert runtime.shown(POSITIONS, PositionSettings(n_positions=1024, d_model=1024, base=10000, measure="cosine")) \
        is shown, "cached"
    with pytest.raises(ValueError):
        large.drawn[0, 0] = 2.0
    assert matrix_view("learned", 1, 1, 10.0, "dot").wavelengths is None


# --- position_view: the matrix is built once, and its neighbours are the matrix shown's ---------------------


def count_builds(monkeypatch) -> list[str]:
    """Count encoding_matrix calls that return a matrix, wherever the positions lesson looks the name up."""
    built, original = [], encodings.encoding_matrix

    def counted(kind, *args, **kwargs):
        matrix = original(kind, *args, **kwargs)
        built.append(kind)
        return matrix

    monkeypatch.setattr(encodings, "encoding_matrix", counted)
    monkeypatch.setattr(positions_view, "encoding_matrix", counted, raising=False)  # should it come back
    return built


@pytest.mark.parametrize("kind", ["sinusoidal", "learned", "index", "none"])
def test_one_position_view_builds_the_encoding_matrix_once(monkeypatch, kind):
    built = count_builds(monkeypatch)
    position_view(PositionSettings())
    assert built == ["sinusoidal"]
    built.clear()
    position_view(PositionSettings(kind=kind, n_positions=30, d_model=16))
    assert built == [kind]  # was 2: once for the matrix, once more for its neighbours (issue #60)


def direct_neighbours(values: np.ndarray, k: int) -> float | None:
    """The mean over p of cos(row p, row p + k), one pair at a time."""
    if values.shape[0] <= k or any(not np.any(row) for row in values):
        return None
    pairs = [values[p] @ values[p + k] / (np.linalg.norm(values[p]) * np.linalg.norm(values[p + k]))
             for p in range(values.shape[0] - k)]
    return float(np.mean(pairs))


@pytest.mark.parametrize("settings", [
    PositionSettings(), PositionSettings(n_positions=100, d_model=64, base=10000),
    PositionSettings(n_positions=11, d_model=3, base=10), PositionSettings(kind="learned"),
    PositionSettings(kind=MINILM), PositionSettings(kind="index", n_positions=20), PositionSettings(kind="none"),
], ids=lambda s: f"{s.kind}-{s.n_positions}x{s.d_model}-{s.base}")
def test_neighbours_are_those_of_the_matrix_shown(settings):
    view = position_view(settings)
    values = encoding_matrix(settings.kind, settings.n_positions, settings.d_model, float(settings.base)).values
    assert view.matrix.shape == values.shape
    assert set(view.neighbours) == {1, 10} and view.neighbours is view.matrix.neighbours
    for k, value in view.neighbours.items():
        expected = direct_neighbours(values, k)
        assert value == (None if expected is None else pytest.approx(expected, rel=0, abs=1e-12))
        assert value == mean_neighbour_cosine(values, k)
    if settings.kind in ("index", "none"):  # a zero row (position 0 of the index; every row of none)
        assert view.neighbours[1] is None
    if settings.kind == "sinusoidal" and settings.n_positions == 4:
        assert view.neighbours[1] is not None and view.neighbours[10] is None  # fewer than 11 rows


def test_the_stand_in_matrix_has_its_own_neighbours(monkeypatch):
    """A damaged learned table: the sinusoidal matrix is shown instead, built once, and the neighbours are its."""

    def damaged(*args, **kwargs):
        raise PretrainedModelError("damaged for the test")

    built = count_builds(monkeypatch)
    monkeypatch.setattr(encodings, "learned_table", damaged)
    settings = PositionSettings(kind="learned", n_positions=40, d_model=8, base=1000)
    view = position_view(settings)
    assert "damaged for the test" in view.problem and view.matrix.kind == "sinusoidal"
    assert built == ["sinusoidal"]
    values = encoding_matrix("sinusoidal", 40, 8, 1000.0).values
    assert view.matrix.shape == values.shape == (40, 8)
    for k in (1, 10):
        assert view.neighbours[k] == pytest.approx(direct_neighbours(values, k), rel=0, abs=1e-12)
