"""explorer.analysis.lookup: the lecture's worked example and the user-input parser."""

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.analysis.lookup import (
    EXAMPLE_KEYS,
    EXAMPLE_QUERY,
    EXAMPLE_VALUES,
    MAX_TEXT_LENGTH,
    format_vectors,
    parse_vectors,
    soft_lookup,
)


def _softmax(scores):
    scores = np.asarray(scores, dtype=np.float64)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_lecture_worked_example():
    result = soft_lookup(EXAMPLE_QUERY, EXAMPLE_KEYS, EXAMPLE_VALUES)
    np.testing.assert_allclose(result.scores, [2.0, 2.4, -10.0, 1.8, -12.5], atol=1e-12)
    np.testing.assert_array_equal(np.round(result.weights, 2), [0.30, 0.45, 0.00, 0.25, 0.00])
    np.testing.assert_allclose(result.weights, _softmax([2.0, 2.4, -10.0, 1.8, -12.5]), rtol=1e-12)
    np.testing.assert_allclose(result.output, result.weights @ EXAMPLE_VALUES, rtol=1e-12)
    assert result.scale == 1.0


@pytest.mark.parametrize("j", range(len(EXAMPLE_KEYS)))
def test_query_equal_to_a_key_retrieves_that_key(j):
    weights = soft_lookup(EXAMPLE_KEYS[j], EXAMPLE_KEYS, EXAMPLE_VALUES).weights
    assert weights[j] > 0.99


def test_stacked_queries_give_a_weight_matrix():
    queries = np.vstack([EXAMPLE_QUERY, EXAMPLE_KEYS[:3]])
    result = soft_lookup(queries, EXAMPLE_KEYS, EXAMPLE_VALUES)
    assert result.weights.shape == (4, 5)
    assert result.output.shape == (4, 3)
    np.testing.assert_allclose(result.weights.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(result.weights, _softmax(queries @ EXAMPLE_KEYS.T), rtol=1e-12)


@pytest.mark.parametrize("scale_by_sqrt_d,temperature", [(True, 1.0), (False, 0.5), (True, 3.0)])
def test_scaling_and_temperature_divide_the_scores(scale_by_sqrt_d, temperature):
    result = soft_lookup(EXAMPLE_QUERY, EXAMPLE_KEYS, EXAMPLE_VALUES,
                         scale_by_sqrt_d=scale_by_sqrt_d, temperature=temperature)
    divisor = (math.sqrt(4) if scale_by_sqrt_d else 1.0) * temperature
    raw = EXAMPLE_KEYS @ EXAMPLE_QUERY
    np.testing.assert_allclose(result.scores, raw, rtol=1e-12)
    np.testing.assert_allclose(result.scaled_scores, raw / divisor, rtol=1e-12)
    np.testing.assert_allclose(result.weights, _softmax(raw / divisor), rtol=1e-12)
    assert result.scale == pytest.approx(1 / divisor)


def test_soft_lookup_rejects_bad_shapes_and_temperature():
    with pytest.raises(ValueError, match="shapes"):
        soft_lookup(EXAMPLE_QUERY[:3], EXAMPLE_KEYS, EXAMPLE_VALUES)
    with pytest.raises(ValueError, match="shapes"):
        soft_lookup(EXAMPLE_QUERY, EXAMPLE_KEYS, EXAMPLE_VALUES[:4])
    with pytest.raises(ValueError, match="temperature"):
        soft_lookup(EXAMPLE_QUERY, EXAMPLE_KEYS, EXAMPLE_VALUES, temperature=0.0)


# --- parse_vectors --------------------------------------------------------------------------------


def test_parse_accepts_mixed_separators():
    parsed = parse_vectors("1, 2; 3 4\n5,6")
    assert parsed.dtype == np.float64
    np.testing.assert_array_equal(parsed, [[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(parse_vectors(" -1.5 , +.25 ;\n\n 2e1  3E-1 ;"), [[-1.5, 0.25], [20, 0.3]])


@pytest.mark.parametrize(
    "text,kwargs,message",
    [
        ("1 " * (MAX_TEXT_LENGTH // 2 + 1), {}, "too long"),
        ("1, abc", {}, "not a number"),
        ("nan, 1", {}, "not a number"),
        ("inf", {}, "not a number"),
        ("-Infinity", {}, "not a number"),
        ("1e999", {}, "outside"),
        ("101", {}, "outside"),
        ("0x10", {}, "not a number"),
        ("1_000", {}, "not a number"),
        ("1, 2; 3", {}, "same number"),
        ("1, 2; 3, 4", {"rows": 3}, "expected 3 rows"),
        ("1, 2; 3, 4", {"dim": 3}, "expected 3 numbers"),
        ("1, 2; 3, 4", {"rows": 1}, "expected 1 row,"),
        ("1, 2; 3, 4", {"dim": 1}, "expected 1 number per row"),
        ("1;" * 9, {}, "at most 8 rows"),
        (" ".join(["1"] * 9), {}, "at most"),
        ("", {}, "no numbers"),
        (" ;\n ; ", {}, "no numbers"),
    ],
)
def test_parse_rejects_bad_input_with_a_helpful_message(text, kwargs, message):
    with pytest.raises(ValueError, match=message):
        parse_vectors(text, **kwargs)


def test_parse_rejects_separators_without_numbers():
    """',' holds no number at all; it must not parse to an empty (1, 0) matrix."""
    with pytest.raises(ValueError):
        parse_vectors(",")


def test_parse_with_expected_size():
    np.testing.assert_array_equal(parse_vectors("1 2 3; 4 5 6", rows=2, dim=3), [[1, 2, 3], [4, 5, 6]])


def test_format_round_trip():
    text = format_vectors(EXAMPLE_KEYS)
    rows = [row.strip() for row in re.split(r"[;\n]", text)]
    assert rows[:2] == ["2, 4, 1.5, 0.5", "-3, -1.8, -2.5, 1"]
    np.testing.assert_array_equal(parse_vectors(text), EXAMPLE_KEYS)
    assert format_vectors(np.array([1.0, -0.25])) == "1, -0.25"


_short_decimals = st.integers(-10000, 10000).map(lambda n: n / 100)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 8).flatmap(
    lambda rows: st.integers(1, 8).flatmap(
        lambda dim: st.lists(st.lists(_short_decimals, min_size=dim, max_size=dim), min_size=rows, max_size=rows))))
def test_format_then_parse_round_trips(matrix):
    matrix = np.array(matrix, dtype=np.float64)
    np.testing.assert_array_equal(parse_vectors(format_vectors(matrix)), matrix)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=700), st.text(alphabet="0123456789.,;eE+- \n\tnaif", max_size=80)))
def test_parse_raises_only_value_error(text):
    try:
        result = parse_vectors(text)
    except ValueError:
        return
    assert result.ndim == 2 and 1 <= result.shape[0] <= 8 and result.shape[1] <= 8
    assert np.all(np.isfinite(result)) and np.all(np.abs(result) <= 100)
