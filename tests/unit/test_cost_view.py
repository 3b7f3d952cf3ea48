"""explorer.lessons.cost.counts and explorer.analysis.timing against real modules and fake clocks."""

import pytest

from explorer.analysis.cost import attention_cost, conv1d_cost, encoder_layer_cost, recurrent_cost
from explorer.analysis.timing import TIMED_LAYERS, Timing, measure_forward_times, slower_from
from explorer.lessons.cost.counts import (
    build_stack,
    complexity_rows,
    layers_to_connect,
    operations_curves,
    operations_lengths,
    stack_cost,
)
from explorer.model.parameters import count_parameters


@pytest.mark.parametrize("layer", ["cnn", "rnn", "attention", "encoder"])
@pytest.mark.parametrize("d, k, n", [(8, 3, 1), (12, 2, 3), (16, 5, 2)])
def test_stack_parameters_equal_real_modules(layer, d, k, n):
    real = build_stack(layer, d, k, n, device="cpu")
    assert next(real.parameters()).device.type == "cpu"
    expected = count_parameters(real)
    assert stack_cost(layer, 20, d, k, n).parameters == expected
    assert count_parameters(build_stack(layer, d, k, n)) == expected  # meta device


def test_stack_of_one_layer_is_the_library_per_layer_cost():
    T, d, k = 40, 16, 3
    assert stack_cost("cnn", T, d, k) == conv1d_cost(T, d, k)
    assert stack_cost("rnn", T, d, k) == recurrent_cost("rnn", T, d)
    assert stack_cost("attention", T, d, k) == attention_cost(T, d)
    assert stack_cost("encoder", T, d, k) == encoder_layer_cost(T, d)


def test_stack_rules_for_steps_and_path():
    T, d, k, n = 100, 8, 5, 6
    assert stack_cost("rnn", T, d, k, n).sequential_steps == T + n - 1
    assert stack_cost("rnn", T, d, k, n).path_length == T - 1 + n
    assert stack_cost("attention", T, d, k, n).sequential_steps == n
    assert stack_cost("attention", T, d, k, n).path_length == n
    assert layers_to_connect(T, k) == 25  # ⌈99 / 4⌉
    assert stack_cost("cnn", T, d, k, n).path_length == 25
    assert stack_cost("cnn", T, d, k, 30).path_length == 30
    assert stack_cost("rnn", T, d, k, n).multiplications == n * recurrent_cost("rnn", T, d).multiplications
    with pytest.raises(ValueError):
        stack_cost("rnn", T, d, k, 0)


def test_complexity_rows_and_operation_curves():
    rows = complexity_rows(64, 32, 3, 2)
    assert [r.layer for r in rows] == ["cnn", "rnn", "attention", "encoder"]
    for row in rows:
        assert row.counted_parameters == row.cost.parameters
    curves = operations_curves(8, [4, 8, 16])
    assert curves["T·d² (the RNN's term)"] == [256, 512, 1024]
    assert curves["T²·d (attention's scores and mix)"] == [128, 512, 2048]  # equal at T = d
    assert curves["self-attention layer, exact"][1] == attention_cost(8, 8).multiplications
    lengths = operations_lengths(100, 48)
    assert 100 in lengths and 48 in lengths and lengths[0] == 1 and lengths[-1] == 400
    assert lengths == sorted(set(lengths))


def test_measure_forward_times_measures_every_layer_within_a_generous_budget():
    timings = measure_forward_times([8, 16], 8, budget_s=30.0, repeats=2)
    assert {(t.layer, t.T) for t in timings} == {(layer, T) for layer in TIMED_LAYERS for T in (8, 16)}
    assert all(t.seconds is not None and t.seconds > 0 and 1 <= t.runs <= 2 for t in timings)


def test_measure_forward_times_stops_when_the_budget_is_spent():
    ticks = iter(range(10_000))
    timings = measure_forward_times([8, 16, 32], 8, budget_s=0.0, clock=lambda: float(next(ticks)))
    assert all(t.seconds is None and t.runs == 0 for t in timings)
    # A fake clock that advances one second per reading: the first measurement fits in a 4 s budget,
    # after which the predicted cost of the next exceeds what is left.
    ticks = iter(range(10_000))
    timings = measure_forward_times([8, 16], 8, layers=("rnn",), budget_s=4.0, repeats=1,
                                    clock=lambda: float(next(ticks)))
    assert [t.seconds is not None for t in timings] == [True, False]


def test_slower_from_finds_where_one_layer_stays_slower():
    def row(layer, T, s):
        return Timing(layer, T, 8, s, 1)

    timings = [row("rnn", 16, 2.0), row("attention", 16, 1.0), row("rnn", 32, 2.0), row("attention", 32, 3.0),
               row("rnn", 64, 2.0), row("attention", 64, 9.0), row("rnn", 128, None), row("attention", 128, 1.0)]
    assert slower_from(timings, "attention", "rnn") == 32
    assert slower_from(timings, "rnn", "attention") is None

