"""explorer/figures/logscale.py: log10 values on linear axes, their ticks reading 10⁻ᵏ."""

import itertools

import numpy as np
import pytest

from explorer.figures.logscale import LOG_LABEL, log_range, log_ticks, power_label


@pytest.mark.parametrize(("low", "high"), [(-23, -1), (-47, 0), (-3, 0), (-1, 0), (-6, -1), (-300, 0), (-2.5, -0.5),
                                           (-900, -850), (0, 40)])
def test_log_ticks_are_whole_powers_a_round_number_of_orders_apart(low, high):
    ticks = log_ticks(low, high)
    values, texts = ticks["tickvals"], ticks["ticktext"]
    assert 1 <= len(values) <= 9 and values == sorted(values)
    step = values[1] - values[0] if len(values) > 1 else 1
    assert step in (1, 2, 5, 10, 20, 50, 100) and all(v % step == 0 for v in values), "aligned: 1e-40, not 1e-41"
    assert all(b - a == step for a, b in itertools.pairwise(values))
    assert all(low <= v <= high for v in values) or len(values) == 1
    assert texts == [power_label(v) for v in values]


@pytest.mark.parametrize(("k", "text"), [(0, "1"), (1, "10"), (2, "10²"), (-1, "10⁻¹"), (-20, "10⁻²⁰"),
                                         (-308, "10⁻³⁰⁸"), (40, "10⁴⁰")])
def test_a_power_of_ten_reads_in_superscript_not_as_1e(k, text):
    assert power_label(k) == text


def test_the_vega_label_expression_raises_every_digit_and_the_minus_sign():
    """LOG_LABEL (run by Vega in the browser: tests/browser/test_depth_browser.py reads the drawn ticks)
    replaces each of the eleven characters an exponent is written with, everywhere in it."""
    for plain, raised in zip("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹", strict=True):
        assert f"regexp('{plain}', 'g'), '{raised}')" in LOG_LABEL
    assert "1e" not in LOG_LABEL


def test_log_range_spans_whole_powers_around_the_finite_values():
    assert log_range(np.array([-22.4, -1.2, np.nan, -np.inf])) == (-23.0, -1.0)
    assert log_range(np.array([np.nan])) == (-1.0, 0.0)
    assert log_range(np.array([-3.0])) == (-3.0, -2.0)
