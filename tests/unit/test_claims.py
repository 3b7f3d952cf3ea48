"""explorer.analysis.claims against closed forms and torch's own modules."""

import math

import numpy as np
import pytest
import torch

from explorer.analysis.claims import (
    PUBLISHED_LENGTHS,
    added_or_concatenated,
    attention_parameters_by_heads,
    attention_parameters_by_length,
    convolution_steps,
    self_match_wins,
    sinusoidal_range,
)


def test_self_attention_parameters_do_not_grow_with_the_length():
    d = 64
    counts = attention_parameters_by_length(d, 4, [2, 16, 128, 512])
    assert set(counts.values()) == {4 * (d * d + d)}
    reference = torch.nn.MultiheadAttention(d, 4)  # torch's own: the same four d×d projections with biases
    assert sum(p.numel() for p in reference.parameters()) == 4 * (d * d + d)


def test_more_heads_split_the_width_and_keep_the_count():
    assert set(attention_parameters_by_heads(48, [1, 2, 3, 4, 6, 8, 12]).values()) == {4 * (48 * 48 + 48)}


@pytest.mark.parametrize("positions, d", [(4, 4), (128, 64), (2048, 512)])
def test_sinusoidal_values_lie_in_minus_one_to_one(positions, d):
    low, high = sinusoidal_range(positions, d)
    assert low >= -1.0 and high <= 1.0
    assert high == pytest.approx(1.0)  # cos(0) at position 0


def test_adding_keeps_the_width_and_concatenating_widens_what_follows():
    combined = added_or_concatenated(64)
    assert combined["added"].width == 64 and combined["concatenated"].width == 128
    projection = torch.nn.Linear(combined["concatenated"].width, 64)
    assert sum(p.numel() for p in projection.parameters()) == combined["concatenated"].query_parameters


@pytest.mark.parametrize("T, k", [(1, 3), (2, 2), (8, 3), (9, 3), (64, 5), (100, 2)])
def test_a_convolution_is_one_step_and_its_path_is_the_ceiling(T, k):
    steps = convolution_steps(T, k)
    assert steps.sequential_steps == 1
    assert steps.layers_to_connect == (0 if T == 1 else math.ceil((T - 1) / (k - 1)))


def test_a_query_equal_to_a_key_wins_only_when_the_keys_have_equal_length():
    rng = np.random.default_rng(0)
    unit = rng.normal(size=(6, 8))
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    assert self_match_wins(unit).all()  # equal length: Cauchy–Schwarz, q·k_j = 1 > q·k_i
    longer = unit.copy()
    longer[0] = 3 * unit[1] + 0.1 * unit[0]  # a long key near key 1's direction ...
    assert not self_match_wins(longer)[1]  # ... takes key 1's own query: q·k_0 ≈ 3 > q·k_1 = 1
    assert self_match_wins(longer)[0]


def test_published_lengths_name_their_source():
    by_model = {entry.model: entry for entry in PUBLISHED_LENGTHS}
    assert by_model["GPT-3 (2020)"].positions == 2048 and by_model["BERT (2018)"].positions == 512
    assert by_model["Transformer (2017)"].positions is None
    assert all(entry.source for entry in PUBLISHED_LENGTHS)
