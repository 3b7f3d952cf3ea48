"""AppTest: the cost page — the complexity table against real modules, the crossover, the stopwatch."""

import numpy as np
import pytest
from torch import nn

from explorer.analysis.cost import attention_cost, conv1d_cost, encoder_layer_cost, recurrent_cost
from explorer.analysis.timing import TIMED_LAYERS
from explorer.lessons.cost import view as cost_lesson
from explorer.model.attention import MultiHeadAttention
from explorer.model.parameters import count_parameters
from explorer.model.rnn import RecurrentNet
from explorer.model.transformer import EncoderLayer
from explorer.serve import runtime
from harness.apptest import info_text, plotly_array, plotly_figures, run_page, vega_data

PAGE = "explorer/lessons/cost/cost.py"
UP_TO_256 = {"time_T": "256"}  # the stopwatch shown up to T = 256




def real_modules(layer: str, d: int, k: int) -> nn.Module:
    """Built here, independently of explorer.cost_view."""
    return {
        "CNN": lambda: nn.Conv1d(d, d, k),
        "RNN (tanh)": lambda: RecurrentNet("rnn", d, d),
        "self-attention": lambda: MultiHeadAttention(d, 4),
        "encoder layer": lambda: EncoderLayer(d, 4, 4 * d),
    }[layer]()


def table_of(at):
    table = at.dataframe[0].value
    table["kind"] = table["layer"].str.replace(r" ×\d+$", "", regex=True)
    return table.set_index("kind")


@pytest.mark.parametrize("params", [{}, {"T": "100", "d": "32", "k": "5", "layers": "3"}])
def test_exact_counts_equal_the_library_and_the_built_torch_modules(params):
    at = run_page(PAGE, {**UP_TO_256, **params})
    assert not at.info
    T, d, k, n = (int(params.get(key, default)) for key, default in (("T", 512), ("d", 64), ("k", 3), ("layers", 1)))
    table = table_of(at)
    per_layer = {"CNN": conv1d_cost(T, d, k), "RNN (tanh)": recurrent_cost("rnn", T, d),
                 "self-attention": attention_cost(T, d), "encoder layer": encoder_layer_cost(T, d)}
    assert list(table.index) == list(per_layer)
    for layer, cost in per_layer.items():
        row = table.loc[layer]
        counted = sum(count_parameters(real_modules(layer, d, k)) for _ in range(n))
        assert row["exact"] == row["PyTorch count"] == counted == n * cost.parameters
        assert row["multiplications"] == n * cost.multiplications
    assert table.loc["RNN (tanh)", "steps"] == T + n - 1
    assert table.loc["self-attention", "steps"] == n and table.loc["self-attention", "path"] == n
    assert table.loc["RNN (tanh)", "path"] == T - 1 + n
    assert table.loc["CNN", "path"] == max(n, -(-(T - 1) // (k - 1)))
    assert table.loc["CNN", "steps"] == n and table.loc["CNN", "sequential steps"] == "O(1)"  # not the notes' O(T)
    bars = plotly_figures(at)[0]["data"]  # one bar per layer in each of the four panels
    for axis, column in zip(("x", "x2", "x3", "x4"), ("exact", "multiplications", "steps", "path"), strict=True):
        panel = [b for b in bars if b["xaxis"] == axis]
        assert [b["name"] for b in panel] == list(per_layer)
        assert [plotly_array([b["x"]])[0][0] for b in panel] == [table.loc[layer, column] for layer in per_layer]
    assert table.loc["self-attention", "operations"] == "O(T·d² + T²·d)"  # the projections too, not the notes' O(T²·d)
    assert table.loc["RNN (tanh)", "operations"] == "O(T·d²)"


def test_changing_the_sizes_updates_the_table():
    at = run_page(PAGE, UP_TO_256)
    at.select_slider(key="d").set_value(128).run()
    at.slider(key="layers").set_value(6).run()
    table = table_of(at)
    assert table.loc["self-attention", "exact"] == 6 * attention_cost(512, 128).parameters
    assert table.loc["self-attention", "layer"] == "self-attention ×6"


def test_crossover_at_t_equals_d():
    at = run_page(PAGE, {**UP_TO_256, "d": "32", "T": "100"})
    data = vega_data(at, 0)
    rnn_term = data[data["series"] == "T·d² (the RNN's term)"].set_index("T")["multiplications"]
    attention_term = data[data["series"] == "T²·d (attention's scores and mix)"].set_index("T")["multiplications"]
    assert rnn_term[32] == attention_term[32] == 32**3
    smaller = [T for T in rnn_term.index if T < 32]
    larger = [T for T in rnn_term.index if T > 32]
    assert all(attention_term[T] < rnn_term[T] for T in smaller)
    assert all(attention_term[T] > rnn_term[T] for T in larger)
    assert max(rnn_term.index) >= 4 * 100
    exact = data[data["series"] == "self-attention layer, exact"].set_index("T")["multiplications"]
    assert exact[32] == attention_cost(32, 32).multiplications


def test_the_stopwatch_measures_each_layer_within_the_budget():
    at = run_page(PAGE, UP_TO_256)
    data = vega_data(at, 1)
    assert set(data["layer"]) == set(TIMED_LAYERS.values())
    assert sorted(set(data["T"])) == [16, 32, 64, 128, 256]
    measured = data.dropna(subset=["milliseconds"])
    assert len(measured) >= 3 and (measured["milliseconds"] > 0).all()
    np.testing.assert_allclose(measured["microseconds per position"],
                               1000 * measured["milliseconds"] / measured["T"], rtol=1e-9)
    assert len(at.get("download_button")) == 3


@pytest.mark.parametrize(
    "params, expected_in_note",
    [({"T": "0"}, "Sequence length T"), ({"d": "100"}, "Width d"), ({"k": "1"}, "kernel size"),
     ({"layers": "99"}, "Layers N"), ({"time_T": "100000"}, "Time sequences"), ({"x": "y"}, "“x”")],
)
def test_bad_url_values_fall_back_with_a_note(params, expected_in_note):
    at = run_page(PAGE, {**UP_TO_256, **params} if "time_T" not in params else params)
    assert expected_in_note in info_text(at)
    assert len(at.dataframe[0].value) == 4


def test_moving_the_stopwatch_range_filters_one_measurement():
    """The "up to T" slider shows more or fewer of the same timings: it never starts the stopwatch
    again (one measurement per width, in ascending T)."""
    at = run_page(PAGE, {"time_T": "4096", "d": "16"})
    at.button(key="time_width").click().run()
    wide = vega_data(at, 1)
    assert max(wide["T"]) == 4096
    at.select_slider(key="time_T").set_value(256).run()
    narrow = vega_data(at, 1)
    assert max(narrow["T"]) == 256
    shared = wide[wide["T"] <= 256].reset_index(drop=True)
    # The same measurement, not a new one: timings are never equal to the last digit by chance.
    np.testing.assert_array_equal(shared["milliseconds"].to_numpy(), narrow["milliseconds"].to_numpy())


def test_other_widths_are_timed_on_request_then_for_everyone():
    """The stopwatch holds ~1 s of the shared server's CPU: the default width is timed for everyone,
    another width when someone asks, and from then on every session sees it without asking."""
    runtime.clear(("result",))  # timings are shared by the process: forget what tests run before this one timed
    cost_lesson._timed_widths.clear()  # (and which widths they timed: a unit test run first may have timed 512)
    at = run_page(PAGE, {"d": "512"})
    assert len(at.get("vega_lite_chart")) == 1 and not at.exception  # the crossover chart only
    assert "has not run at width d = 512" in " ".join(m.value for m in at.markdown)
    at.button(key="time_width").click().run()
    assert len(at.get("vega_lite_chart")) == 2 and not at.exception
    assert set(vega_data(at, 1)["layer"]) == set(TIMED_LAYERS.values())
    other_session = run_page(PAGE, {"d": "512"})
    assert len(other_session.get("vega_lite_chart")) == 2
    assert "time_width" not in [button.key for button in other_session.button]


def test_the_attention_row_is_labelled_with_its_projections():
    """The notes' O(T²·d) counts the scores and the weighted sum alone; the row counts the projections
    too (98 % of its multiplications at T = 16, d = 512), and the page says so beside the table."""
    at = run_page(PAGE, {**UP_TO_256, "T": "16", "d": "512"})
    assert table_of(at).loc["self-attention", "operations"] == "O(T·d² + T²·d)"
    share = 4 * 16 * 512**2 / attention_cost(16, 512).multiplications
    text = " ".join(" ".join(m.value.split()) for m in at.markdown)
    assert f"{share:.0%}" == "98%" and "so its row reads **O(T·d² + T²·d)**" in text
    assert f"at your T = 16 and d = 512, {share:.0%} of its multiplications are in the projections" in text


def test_the_crossover_text_corrects_the_notes_fewer_operations_below_t_equals_d():
    """The notes: attention does fewer operations when T < d. Counted, the layer does 2 + T/d times
    the tanh RNN's multiplications at every T: the terms cross at T = d, the layers never do."""
    at = run_page(PAGE, {**UP_TO_256, "T": "16", "d": "512"})
    text = " ".join(" ".join(m.value.split()) for m in at.markdown)
    ratio = 2 + 16 / 512
    assert attention_cost(16, 512).multiplications == ratio * recurrent_cost("rnn", 16, 512).multiplications
    assert f"{ratio:.3g} times as many (2 + T/d)" in text
    assert "The notes say attention does fewer operations when T < d" in text
    assert "two d × d matrices (W_ih on the input, W_hh on the state)" in text
    assert "(the state times W_hh)" not in text
    # the encoder layer's two LayerNorms count 2·d each: a scale and a shift per feature
    assert "biases and the LayerNorms' scales and shifts" in text
    assert sum(p.numel() for p in nn.LayerNorm(512).parameters()) == 2 * 512
