"""Claims, measured (explorer/kit/measured.py; each lesson's boxes.py): each box's finding follows its own
measurement, against
closed forms and the lecture's worked example."""

import numpy as np
import pytest

from explorer.analysis.lookup import EXAMPLE_KEYS
from explorer.lessons.cost import boxes as cost
from explorer.lessons.length import boxes as length
from explorer.lessons.lookup import boxes as lookup
from explorer.lessons.positions import boxes as positions


@pytest.mark.parametrize("d", [8, 32, 64])
def test_attention_parameters_do_not_grow_with_length_or_heads(d):
    box = cost.attention_parameters(d)
    assert {row[2] for row in box.rows} == {4 * (d * d + d)}
    assert f"{4 * (d * d + d):,} parameters" in box.finding and "O(d²)" in box.finding


@pytest.mark.parametrize(("T", "k", "layers"), [(16, 3, 8), (64, 5, 16), (2, 2, 1)])
def test_a_convolution_is_one_step_its_path_grows(T, k, layers):
    box = cost.convolution_parallel(T, k)
    assert box.rows[0][1] == 1 and box.rows[1][1] == layers == -(-(T - 1) // (k - 1)) and box.rows[2][1] == T
    assert f"{layers} stacked layers" in box.finding


def test_sinusoidal_values_stay_within_one():
    box = positions.sinusoidal_bounds(100, 512, 10000.0)
    _, low, high, *_ = box.rows[0]
    assert -1 <= low < -0.99 and 0.99 < high <= 1 and "within [−1, 1]" in box.finding


def test_added_keeps_the_width():
    box = positions.added_not_concatenated(64)
    assert box.rows == (("added", 64, 64 * 64 + 64), ("concatenated", 128, 128 * 64 + 64))


def test_self_match_follows_the_keys_lengths():
    equal = np.eye(3) * 2.0
    assert "every key wins" in lookup.self_match(equal).finding
    unequal = np.array([[1.0, 0.0], [3.0, 0.5]])  # k1 as the query scores k2 higher: 3 > 1
    box = lookup.self_match(unequal)
    assert box.rows[0][2] == "no" and "k1 loses" in box.finding
    lecture = lookup.self_match(EXAMPLE_KEYS)
    assert len(lecture.rows) == len(EXAMPLE_KEYS)


def test_published_lengths_name_their_sources():
    box = length.published_lengths()
    assert all(row[3] for row in box.rows) and "GPT-3 (2020): 2048" in box.finding
