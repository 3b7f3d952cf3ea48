"""AppTest: the gradient-flow page, read back from the rendered chart data."""

import numpy as np
import pytest
import torch

from explorer.lessons.gradients import measures as gradients
from explorer.lessons.gradients.measures import RECALL_MODELS, dependency_views
from explorer.lessons.gradients.view import GradientSettings, gradient_view
from explorer.training.pretrained import forward, load_model
from explorer.training.tasks import Batch
from harness.apptest import (
    assert_no_exception,
    info_text,
    plotly_array,
    plotly_array_1d,
    plotly_figures,
    run_page,
    vega_data,
)

PAGE = "explorer/lessons/gradients/gradients.py"
LOOPS = ("tanh RNN", "LSTM", "GRU")


def curve(at, model: str):
    """log10 ‖∂L/∂x_t‖ of one model as the key figure draws it, over t = 0 … T−1 (NaN where the gradient
    is exactly 0: no line there), and its band's (low, high) over the same t."""
    figure, strip = plotly_figures(at)[:2]  # the key figure, then the same curves as colour
    T = plotly_array(strip["data"][0]["z"]).shape[1]
    line = next(trace for trace in figure["data"] if trace.get("name") == model)
    band = next(trace for trace in figure["data"] if trace.get("legendgroup") == model and trace.get("fill"))
    t = plotly_array_1d(line["x"]).astype(int)
    assert list(plotly_array_1d(band["x"])) == [*t, *t[::-1]], "the band spans the line's positions"
    values, low, high = np.full(T, np.nan), np.full(T, np.nan), np.full(T, np.nan)
    values[t] = plotly_array_1d(line["y"])
    edges = plotly_array_1d(band["y"])
    high[t], low[t] = edges[:len(t)], edges[len(t):][::-1]
    return values, (low, high)


def test_default_view_rnn_gradient_vanishes_while_attention_stays_flat():
    at = run_page(PAGE)
    assert not at.info, "a clean URL must not produce a note"
    rnn, (low, high) = curve(at, "tanh RNN")
    T = len(rnn)
    assert T == 64 and np.isfinite(rnn).all()
    assert rnn[T - 1] - rnn[1] > 10, "tanh RNN: many orders of magnitude lost from t = T−1 back to t = 1"
    assert np.all(np.diff(rnn[1:]) > -0.5), "and it decays steadily"
    attention, _ = curve(at, "causal attention")
    assert abs(attention[T - 1] - attention[1]) < 1, "attention stays within one order of magnitude"
    for model in ("LSTM", "GRU"):
        values, _ = curve(at, model)
        assert values[T - 1] - values[1] > 5
    # The band is the spread over 3 seeds around the mean.
    assert np.all(low <= rnn) and np.all(rnn <= high) and np.any(low < high)
    strip = plotly_array(plotly_figures(at)[1]["data"][0]["z"])  # the curves as colour, under the key figure
    np.testing.assert_allclose(strip[0], rnn, rtol=1e-12)
    assert strip.shape == (4, T)
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["tanh RNN"]) == pytest.approx(rnn[1] - rnn[T - 1], abs=0.05)


def test_a_large_orthogonal_gain_makes_the_rnn_gradient_explode():
    at = run_page(PAGE)
    at.radio(key="init").set_value("orthogonal").run()
    at.slider(key="gain").set_value(3.0).run()
    assert_no_exception(at)
    rnn, _ = curve(at, "tanh RNN")
    assert rnn[1] - rnn[-1] > 3, "with gain 3 the earliest inputs get by far the largest gradients"
    assert any("Exploding gradient" in w.value for w in at.warning)
    at.slider(key="gain").set_value(0.5).run()
    small, _ = curve(at, "tanh RNN")
    assert small[-1] - small[1] > 10


def test_truncation_window_zeroes_the_recurrent_gradients_beyond_it():
    at = run_page(PAGE, {"bptt": "8"})
    assert not at.info
    T = 64
    beyond = np.arange(T) < T - 8
    for model in LOOPS:
        values, _ = curve(at, model)
        assert np.isnan(values[beyond]).all(), "zeros have no logarithm: they are left out of the line"
        assert np.isfinite(values[~beyond]).all()
    attention, _ = curve(at, "causal attention")
    assert np.isfinite(attention).all()
    strip = plotly_array(plotly_figures(at)[1]["data"][0]["z"])
    assert np.isnan(strip[:3, : T - 8]).all() and np.isfinite(strip[:, T - 8:]).all()
    # The zeros are shaded, from the same data, and labelled with where they end.
    layout = plotly_figures(at)[0]["layout"]
    (shade,), (label,) = layout["shapes"], layout["annotations"]
    assert (shade["x0"], shade["x1"]) == (0, T - 9)
    assert label["text"] == f"truncated BPTT: gradient<br>exactly 0 up to t = {T - 9}"  # two lines fit a phone
    assert "shapes" not in plotly_figures(run_page(PAGE))[0]["layout"], "no window, nothing shaded"


def test_dependency_matrices_fade_for_the_loop_and_stay_flat_for_attention():
    at = run_page(PAGE)
    figure = next(f for f in plotly_figures(at) if len(f["data"]) == 3)
    loop, causal, unmasked = (plotly_array(trace["z"]) for trace in figure["data"])
    T = loop.shape[0]
    assert T == 32 and figure["layout"]["coloraxis"]["colorbar"]["title"]["text"]
    upper = np.triu(np.ones((T, T), dtype=bool), 1)
    for z in (loop, causal):
        assert np.isnan(z[upper]).all() and np.isfinite(z[~upper]).all()
    assert np.isfinite(unmasked).all(), "the unmasked encoder fills the whole square"
    assert loop[-1, -1] - loop[-1, 0] > 5, "log colour: the loop's fade spans many orders"
    assert np.ptp(causal[-1, :]) < 2
    np.testing.assert_allclose(10 ** loop[~upper], dependency_views("rnn", 32, 16).recurrent[~upper], rtol=1e-9)


def test_unrolled_view_shows_t_steps_against_one():
    at = run_page(PAGE, {"T": "16"})
    figure = next(f for f in plotly_figures(at) if "annotations" in f["layout"] and len(f["data"]) > 3)
    texts = [a["text"] for a in figure["layout"]["annotations"]]
    assert any("16 sequential steps" in t for t in texts) and any("one parallel step" in t for t in texts)
    assert "16" in texts and "1" in texts  # path lengths under x_0 (loop) and under every x (attention)


CHECKED_DISTANCES = (1, 2, 9, 64, 127, 128)


def reference_accuracy(name: str) -> dict[int, float]:
    """Accuracy at a few distances computed here: the evaluation examples at those distances, at
    full length (padding included), read at each '?'."""
    loaded = load_model(name)
    batch = loaded.task.evaluation()
    chosen = torch.isin(batch.distance, torch.tensor(CHECKED_DISTANCES))
    part = Batch(batch.inputs[chosen], batch.targets[chosen], batch.valid[chosen], distance=batch.distance[chosen])
    with torch.no_grad():
        logits = forward(loaded.model, part)
    index = torch.arange(len(part.distance))
    right = (logits[index, part.distance].argmax(-1) == part.targets[index, part.distance]).numpy()
    distance = part.distance.numpy()
    return {d: float(right[distance == d].mean()) for d in CHECKED_DISTANCES}


def test_recall_accuracy_is_read_from_the_models_evaluation():
    at = run_page(PAGE)
    data = vega_data(at, 0)  # the recall chart: the one Vega-Lite chart
    assert not at.warning, "every shipped recall model should load"
    for name, label in RECALL_MODELS.items():
        rows = data[data["model"] == label].set_index("distance")
        assert list(rows.index) == list(range(1, load_model(name).task.max_distance + 1))
        expected = reference_accuracy(name)
        np.testing.assert_allclose(rows.loc[list(CHECKED_DISTANCES), "accuracy"], list(expected.values()), atol=1e-12)
    assert "Download accuracy by distance (CSV)" in [b.proto.label for b in at.get("download_button")]
    # The text quotes the page's own measurement at the shortest and the longest band.
    text = next(m.value for m in at.markdown if "At distances 1–8" in m.value)
    near = text.split("**At distances 1–8:**")[1].split("**")[0]
    far = text.split("**At 129–256:**")[1].split("\n\n")[0]
    for name, label in RECALL_MODELS.items():
        bands = load_model(name).card["heldout_by_distance"]
        assert f"{label} {bands['1–8']:.0%}" in near and f"{label} {bands['129–256']:.0%}" in far
    # The table of bands is the page's own evaluation, and agrees with what training wrote in the cards.
    labels = set(RECALL_MODELS.values())  # the recall table (section 2's measured box comes before it)
    table = next(d.value for d in at.dataframe if labels <= set(d.value.index))
    for name, label in RECALL_MODELS.items():
        assert dict(table.loc[label]) == pytest.approx(load_model(name).card["heldout_by_distance"], abs=1e-4)


def test_the_main_controls_drive_the_view_and_every_chart_has_a_csv():
    at = run_page(PAGE, {"T": "32", "width": "16", "seeds": "1", "dep_T": "16", "dep_kind": "lstm"})
    assert not at.info
    rnn, (low, high) = curve(at, "tanh RNN")
    assert len(rnn) == 32 and np.array_equal(low, high), "one seed: no spread"
    figure = next(f for f in plotly_figures(at) if len(f["data"]) == 3)
    assert plotly_array(figure["data"][0]["z"]).shape == (16, 16)
    assert figure["layout"]["annotations"][0]["text"].startswith("LSTM")
    at.select_slider(key="T").set_value(128).run()
    assert len(curve(at, "tanh RNN")[0]) == 128
    labels = [b.proto.label for b in at.get("download_button")]
    assert len(labels) >= 3 and all("CSV" in label for label in labels)  # + one for the trained models


def test_the_bidirectional_rnn_reads_both_ways_in_the_dependency_view():
    """#30: the BiRNN beside the one-way loop and unmasked attention: its matrix fills the whole square
    (the backward loop reaches later inputs), fading with |t − s| both ways, and the text says so."""
    at = run_page(PAGE, {"dep_T": "16", "dep_kind": "birnn"})
    assert not at.info
    figure = next(f for f in plotly_figures(at) if len(f["data"]) == 3)
    both = plotly_array(figure["data"][0]["z"])
    assert figure["layout"]["annotations"][0]["text"].startswith("bidirectional RNN")
    assert np.isfinite(both).all(), "every output depends on every input"
    np.testing.assert_allclose(10 ** both, dependency_views("birnn", 16, 16).recurrent, rtol=1e-9)
    assert both[0, 0] - both[0, -1] > 2 and both[-1, -1] - both[-1, 0] > 2, "it fades both ways"
    assert any("bidirectional loop" in m.value for m in at.markdown)


@pytest.mark.parametrize(
    "params, expected_in_note",
    [
        ({"T": "1000"}, "Sequence length T"),
        ({"width": "abc"}, "Width"),
        ({"gain": "99", "init": "orthogonal"}, "Orthogonal gain"),
        ({"init": "xavier"}, "Recurrent weights"),
        ({"forget_bias": "9"}, "LSTM forget-gate bias"),
        ({"forget_bias": "-1"}, "LSTM forget-gate bias"),
        ({"forget_bias": "0.3"}, "LSTM forget-gate bias"),
        ({"forget_bias": "abc"}, "LSTM forget-gate bias"),
        ({"bptt": "3"}, "Truncated BPTT"),
        ({"seeds": "0"}, "Random seeds"),
        ({"dep_T": "500"}, "Sequence length for the matrices"),
        ({"dep_kind": "cnn"}, "Recurrent network in the matrices"),
        ({"bogus": "1"}, "bogus"),
    ],
)
def test_bad_url_values_fall_back_with_a_note(params, expected_in_note):
    at = run_page(PAGE, params)
    assert expected_in_note in info_text(at)
    assert np.isfinite(curve(at, "causal attention")[0]).any()


def _try_sentence(at) -> str:
    return next(m.value for m in at.markdown if "**Try.**" in m.value)


def test_the_try_sentence_reads_the_models_at_the_readers_width():
    """What the named gains do is read from the model at the page's own length and width: at width 8 the
    tanh RNN's gradient still fades at gain 3 (the lesson once said it explodes there), at the default
    width it explodes; the numbers are the metrics the reader would see after moving the gain."""
    at = run_page(PAGE)
    assert "would read -0.5 (about flat) at gain 1.6 and +7.9 (exploding) at gain 3" in _try_sentence(at)
    at.radio(key="init").set_value("orthogonal").run()
    at.slider(key="gain").set_value(3.0).run()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["tanh RNN"] == "+7.9", "the sentence quotes what the metric shows at that gain"
    narrow = run_page(PAGE, {"width": "8"})
    assert_no_exception(narrow)
    assert "(still fading) at gain 3" in _try_sentence(narrow)
    assert "(exploding) at gain 3" not in _try_sentence(narrow)


def test_the_reading_and_section_3_follow_the_weights():
    """With orthogonal weights at gain 1 the gated networks lose as much as the tanh RNN, and at gain 6 the
    loop's dependence grows with the distance: the page says so, where it once said the opposite."""
    at = run_page(PAGE, {"init": "orthogonal", "gain": "1.0", "forget_bias": "0.0"})
    assert_no_exception(at)
    reading = next(m.value for m in at.markdown if "**Reading it.**" in m.value)
    assert "here the LSTM and the GRU lose as much as the tanh RNN or more" in reading
    # with the forget-gate bias practitioners add, the LSTM loses less there: the page reads it, not a rule
    at = run_page(PAGE, {"init": "orthogonal", "gain": "1.0"})
    reading = next(m.value for m in at.markdown if "**Reading it.**" in m.value)
    assert "here the GRU loses as much as the tanh RNN or more" in reading
    at = run_page(PAGE, {"init": "orthogonal", "gain": "6.0", "dep_kind": "gru"})
    assert_no_exception(at)
    matrices = next(m.value for m in at.markdown if "The **loop** fills the lower triangle" in m.value)
    assert "growing with the distance t − s" in matrices


def _metrics(at) -> dict[str, float]:
    return {m.label: float(m.value) for m in at.metric}


def test_the_forget_gate_bias_control_drives_the_lstm_and_nothing_else():
    """Issue #59: the LSTM faded because of PyTorch's default forget-gate bias, which the page never said. Its
    control starts at +1 (the value practitioners add); 0, PyTorch's default, stays selectable; the tanh RNN,
    the GRU and attention do not move."""
    at = run_page(PAGE)
    assert at.slider(key="forget_bias").value == 1.0
    one = _metrics(at)
    lstm_one, _ = curve(at, "LSTM")
    expected = gradient_view(GradientSettings(forget_bias=1.0)).change
    assert one["LSTM"] == pytest.approx(expected["lstm"], abs=0.05)
    at.slider(key="forget_bias").set_value(0.0).run()
    assert_no_exception(at)
    zero = _metrics(at)
    assert zero["LSTM"] == pytest.approx(gradient_view(GradientSettings(forget_bias=0.0)).change["lstm"], abs=0.05)
    assert zero["LSTM"] < one["LSTM"] - 5, "at PyTorch's default the LSTM loses many more orders"
    for label in ("tanh RNN", "GRU", "causal attention"):
        assert zero[label] == one[label]
    assert not np.allclose(curve(at, "LSTM")[0], lstm_one)
    reading = next(m.value for m in at.markdown if "**What sets the slopes" in m.value)
    assert "its bias: PyTorch's default draws, about 0, and σ(0) = 0.5" in reading


def test_the_forget_gate_bias_is_read_from_the_link():
    at = run_page(PAGE, {"forget_bias": "3.0", "T": "32"})
    assert not at.info
    assert at.slider(key="forget_bias").value == 3.0
    expected = gradient_view(GradientSettings(T=32, forget_bias=3.0)).change["lstm"]
    assert _metrics(at)["LSTM"] == pytest.approx(expected, abs=0.05)
    # the dependency matrices follow it (section 3's LSTM)
    at = run_page(PAGE, {"forget_bias": "3.0", "dep_kind": "lstm", "dep_T": "16"})
    figure = next(f for f in plotly_figures(at) if len(f["data"]) == 3)
    loop = plotly_array(figure["data"][0]["z"])
    lower = np.tril(np.ones((16, 16), dtype=bool))
    np.testing.assert_allclose(10 ** loop[lower], dependency_views("lstm", 16, 16, forget_bias=3.0).recurrent[lower],
                               rtol=1e-9)
    assert any("forget-gate bias +3 added" in m.value for m in at.markdown)


def test_the_page_names_the_initialisation_where_the_slopes_are_shown():
    """The old reading said "the LSTM's and GRU's gates let part of the state pass through unchanged" beside
    a figure where, at PyTorch's default bias, they halved it at every step; now the figure's caption names
    the weights and the reading gives how much each gate passes."""
    at = run_page(PAGE)
    lead = next(m.value for m in at.markdown if m.value.startswith("A recurrent network reaches"))
    assert "the four networks, freshly initialised," in lead and "(Pascanu, Mikolov & Bengio 2013)" in lead
    view = gradient_view(GradientSettings())
    captions = [c.value for c in at.caption]
    assert any(f"spectral radius {view.curves.radius:.2f}, mean over 3 seeds" in c for c in captions)
    reading = next(m.value for m in at.markdown if "**Reading it.**" in m.value)
    assert "pass through unchanged" not in reading and "usually makes them lose less" not in reading
    assert f"Here the LSTM's forget gate averages {view.curves.gates['lstm']:.2f}" in reading
    assert "PyTorch's default, uniform(±1/√H)" in reading
    recall = next(m.value for m in at.markdown if "Training also opens the LSTM's forget gates" in m.value)
    gates = gradients.trained_forget_gates("recall-lstm")
    assert f"average {gates.trained:.2f} in the trained model" in recall
    assert "it can read the first position in one step" in recall


def test_the_pages_other_sentences_say_what_is_computed():
    """Sentences a lecturer would not sign, as they were: the float64 note said the back-propagation
    'rescales the gradient at every step' (it does every RESCALE_EVERY = 8) and called 10⁻³⁰⁸ 'the smallest
    float64 number' (the smallest normal one: subnormals go to 5e-324); the exploding warning spoke of 'a
    single update of that size' without the size; section 4 said 'nothing in training asked it to hold on
    for more than a few steps' (some gaps are longer); section 3 called attention's row even with no factor."""
    from explorer.analysis.bptt import RESCALE_EVERY
    from explorer.training.tasks import RecallTask
    from tests.unit.test_lib_bptt import reference_log10

    at = run_page(PAGE)
    text = " ".join(" ".join(m.value for m in at.markdown).split())  # the prose's line breaks as spaces
    assert RESCALE_EVERY > 1 and "rescales the gradient every few steps" in text
    assert "at every step and keeps" not in text and "the smallest float64 number" not in text
    assert np.finfo(np.float64).tiny == pytest.approx(2.2e-308, rel=0.02)  # "about 10⁻³⁰⁸, where normal numbers end"
    short = 1 - (1 - RecallTask.GEOMETRIC_STOP) ** 3
    assert f"({short:.0%} of its gaps are 3 letters or fewer)" in text and "nothing in training asked" not in text
    causal = dependency_views("rnn", 32, 16).causal[31, :31]
    assert f"within a factor of {causal.max() / causal.min():.0f}" in text
    at.radio(key="init").set_value("orthogonal").run()
    at.slider(key="gain").set_value(3.0).run()
    warning = next(w.value for w in at.warning if "Exploding gradient" in w.value)
    size = np.mean([reference_log10("rnn", 32, 64, init="orthogonal", gain=3.0, seed=s)[1] for s in range(3)])
    assert f"a norm of about 1e{size:.0f}" in warning and "(Pascanu, Mikolov & Bengio 2013)" in warning


def test_the_gradient_chart_takes_a_phones_width():
    """At a wide chart's 600 px a phone showed the gradient up to t ≈ 35 of 63; it fits the screen now."""
    styles = [element.proto.body for element in run_page(PAGE).get("html")]
    assert any(".st-key-gradient_chart " in style and "min-width: 0px" in style for style in styles)
