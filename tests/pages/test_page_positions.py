"""AppTest: the positional-encodings page, read back from the rendered figure data."""

import json
import math
import re

import numpy as np
import pytest
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

from explorer.kit.prose import lesson_sections
from explorer.kit.steps import load_steps
from explorer.model.positional import alibi_slopes
from explorer.training.pretrained import load_model
from harness.apptest import info_text, page_test, plotly_array, run_page

PAGE = "explorer/lessons/positions/positions.py"
LECTURE_TABLE = [[0.00, 1.00, 0.00, 1.00], [0.84, 0.54, 0.10, 1.00], [0.91, -0.42, 0.20, 0.98],
                 [0.14, -0.99, 0.30, 0.96]]


def sinusoid(positions, dims, d, base):
    """PE[p, j] written out from the formula, for the given positions and dimensions."""
    return np.array([[math.sin(p / base ** (2 * (j // 2) / d)) if j % 2 == 0 else
                      math.cos(p / base ** (2 * (j // 2) / d)) for j in dims] for p in positions])


def chart(at, key: str):
    """The JSON spec of the Plotly chart drawn with `key`."""
    found = [el for el in at.get("plotly_chart") if el.proto.id.endswith(f"-{key}")]
    assert len(found) == 1, f"expected one Plotly chart with key {key!r}"
    return json.loads(found[0].proto.spec)


def matrix(at, key="matrix"):
    """(z, row positions, column indices) of a single-heatmap chart."""
    trace = chart(at, key)["data"][0]
    return plotly_array(trace["z"]), plotly_array(trace["y"]).astype(int), plotly_array(trace["x"]).astype(int)


def line_data(at, column: str):
    """The data behind the Altair chart that has `column`."""
    for element in at.get("vega_lite_chart"):
        for dataset in element.proto.datasets:
            frame = convert_arrow_bytes_to_pandas_df(dataset.data.data)
            if column in frame.columns:
                return frame
    raise AssertionError(f"no Altair chart has a column {column!r}")


def markdown_text(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def captions(at) -> str:
    return "\n".join(c.value for c in at.caption)


# --- the matrix -----------------------------------------------------------------------------------------


def test_opens_on_the_lecture_table_drawn_and_printed():
    at = run_page(PAGE)
    assert not at.info, "a clean URL must not produce a note"
    z, rows, cols = matrix(at)
    np.testing.assert_allclose(z, sinusoid(range(4), range(4), 4, 100.0), rtol=0, atol=1e-6)
    assert rows.tolist() == [0, 1, 2, 3] and cols.tolist() == [0, 1, 2, 3]
    figure = chart(at, "matrix")
    assert figure["layout"]["yaxis"]["ticktext"] == ["0 · I", "1 · am", "2 · a", "3 · robot"]
    assert figure["data"][0]["colorscale"][0][1] == "rgb(127,59,8)", "PuOr, sent as explicit stops"
    table = at.table[0].value
    assert table.to_numpy().tolist() == LECTURE_TABLE
    assert table.iloc[1].tolist() == [0.84, 0.54, 0.10, 1.00]
    assert list(table.columns) == ["0: sin(p/1)", "1: cos(p/1)", "2: sin(p/10)", "3: cos(p/10)"]
    assert "Download the full matrix" in at.get("download_button")[0].proto.label


@pytest.mark.parametrize("positions, d_model, base", [(50, 16, 10000), (13, 7, 30), (1, 1, 100)])
def test_rendered_sinusoidal_matrix_is_the_closed_form(positions, d_model, base):
    at = run_page(PAGE, {"positions": str(positions), "d_model": str(d_model), "base": str(base)})
    assert not at.info
    z, rows, cols = matrix(at)
    assert z.shape == (positions, d_model)
    np.testing.assert_allclose(z, sinusoid(rows, cols, d_model, float(base)), rtol=0, atol=1e-6)


def test_largest_matrix_is_downsampled_small_and_still_exact():
    at = run_page(PAGE, {"positions": "1024", "d_model": "1024", "base": "10000"})
    z, rows, cols = matrix(at)
    assert z.size <= 256 * 256
    assert rows.tolist() == list(range(0, 1024, 4)) and cols.tolist() == list(range(0, 1024, 5))
    np.testing.assert_allclose(z, sinusoid(rows, cols, 1024, 10000.0), rtol=0, atol=1e-6)
    assert "Downsampled for drawing" in captions(at) and "256 × 205 of the 1024 × 1024" in captions(at)
    assert "drawn sample (256 × 205 cells)" in at.get("download_button")[0].proto.label
    for element in at.get("plotly_chart"):
        assert len(element.proto.spec) < 600_000, "every figure's JSON stays under ~600 KB"
    similarity = plotly_array(chart(at, "similarity_matrix")["data"][0]["z"])
    assert similarity.shape == (256, 256)


def test_preset_buttons_switch_between_the_lecture_table_and_the_classic_picture():
    at = run_page(PAGE, {"kind": "index"})
    classic = next(b for b in at.button if b.proto.label.startswith("Classic"))
    classic.click().run()
    assert (at.slider(key="positions").value, at.slider(key="d_model").value) == (100, 512)
    assert at.select_slider(key="base").value == 10000 and at.radio(key="kind").value == "sinusoidal"
    z, rows, cols = matrix(at)
    assert z.shape == (100, 512), "100 × 512 is drawn in full"
    np.testing.assert_allclose(z, sinusoid(rows, cols, 512, 10000.0), rtol=0, atol=1e-6)
    assert "Downsampled" not in captions(at)
    assert not at.table or at.table[0].value.shape != (100, 512), "no 51 200-number table"
    lecture = next(b for b in at.button if b.proto.label.startswith("Lecture"))
    lecture.click().run()
    assert at.table[0].value.to_numpy().tolist() == LECTURE_TABLE


def test_sliders_drive_the_matrix():
    at = run_page(PAGE)
    at.slider(key="positions").set_value(9).run()
    at.slider(key="d_model").set_value(6).run()
    at.select_slider(key="base").set_value(1000).run()
    z, rows, cols = matrix(at)
    assert z.shape == (9, 6) and rows.tolist() == list(range(9)) and cols.tolist() == list(range(6))
    np.testing.assert_allclose(z, sinusoid(range(9), range(6), 6, 1000.0), rtol=0, atol=1e-6)


def test_learned_matrix_is_the_shipped_models_table_and_not_toeplitz():
    table = load_model("reverse-learned-h4-l2").model.encoder.position.table
    before = table.detach().clone()
    at = run_page(PAGE, {"kind": "learned"})
    assert not at.info
    z, rows, cols = matrix(at)
    np.testing.assert_allclose(z, before.numpy(), rtol=0, atol=1e-6)
    assert (len(rows), len(cols)) == (11, 64)
    assert at.slider(key="positions").proto.disabled and at.slider(key="d_model").proto.disabled
    share = float(markdown_text(at).split("explains ")[1].split("%")[0])
    assert share < 99.0
    assert table.dtype.is_floating_point and str(table.dtype) == "torch.float32"
    assert (table == before).all(), "the shared model is not modified"


def test_index_and_none():
    at = run_page(PAGE, {"kind": "index", "positions": "6", "d_model": "3", "similarity": "cosine"})
    z, _, _ = matrix(at)
    np.testing.assert_array_equal(z, np.repeat(np.arange(6.0)[:, None], 3, axis=1))
    cosine = plotly_array(chart(at, "similarity_matrix")["data"][0]["z"])
    assert np.isnan(cosine[0]).all(), "position 0 is the zero vector: cosine undefined, drawn blank"
    np.testing.assert_allclose(cosine[1:, 1:], 1.0, atol=1e-6)
    at = run_page(PAGE, {"kind": "none", "positions": "5", "d_model": "8"})
    z, _, _ = matrix(at)
    assert not z.any()
    assert "nothing to explain" in markdown_text(at)


# --- geometry --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("measure", ["dot product", "cosine"])
def test_sinusoidal_similarity_matrix_is_toeplitz(measure):
    at = run_page(PAGE, {"positions": "40", "d_model": "16", "base": "10000", "similarity": measure})
    sim = plotly_array(chart(at, "similarity_matrix")["data"][0]["z"])
    assert sim.shape == (40, 40)
    for offset in range(-39, 40):
        diagonal = np.diagonal(sim, offset)
        np.testing.assert_allclose(diagonal, diagonal[0], rtol=0, atol=1e-5)
    assert abs(sim[0, 0] - sim[0, 3]) > 0.1, "and it does change with the distance"
    np.testing.assert_allclose(np.diag(sim), 8.0 if measure == "dot product" else 1.0, atol=1e-5)
    assert "explains 100.0%" in markdown_text(at)
    curves = line_data(at, measure)
    by_start = {name: group[measure].to_numpy() for name, group in curves.groupby("from position")}
    assert set(by_start) == {"p = 0", "p = 13", "p = 26"}
    np.testing.assert_allclose(by_start["p = 26"], by_start["p = 0"][:14], atol=1e-9)


def test_wavelengths_follow_the_formula():
    at = run_page(PAGE, {"positions": "50", "d_model": "10", "base": "100"})
    data = line_data(at, "wavelength (positions)")
    waves = data[data["line"] == "wavelength of pair i"]
    expected = [2 * math.pi * 100 ** (2 * i / 10) for i in range(5)]
    np.testing.assert_allclose(waves["wavelength (positions)"], expected, rtol=1e-12)
    assert data[data["line"] == "50 positions shown"]["wavelength (positions)"].tolist() == [50.0, 50.0]


# --- why attention needs position ---------------------------------------------------------------------------


def shuffle_panels(at):
    figure = chart(at, "shuffle_outputs")
    before, after, difference = (plotly_array(t["z"]) for t in figure["data"])
    return before, after, difference, figure


def test_shuffle_without_encoding_only_moves_rows():
    at = run_page(PAGE)
    assert at.selectbox(key="shuffle_encoding").value == "none"
    before, after, difference, figure = shuffle_panels(at)
    assert before.shape == (7, 64)
    assert np.abs(difference).max() < 1e-12, "exactly 0 up to float64 rounding"
    labels = [t.split(" · ")[1] for t in figure["layout"]["yaxis2"]["ticktext"]]
    order = ["ABCDEFG".index(letter) for letter in labels]
    assert sorted(order) == list(range(7)) and order != list(range(7))
    np.testing.assert_allclose(after, before[order], rtol=0, atol=1e-6)
    assert "zero up to rounding" in markdown_text(at)


def test_shuffle_with_sinusoidal_encoding_changes_the_outputs():
    at = run_page(PAGE, {"shuffle_encoding": "sinusoidal"})
    _, _, difference, _ = shuffle_panels(at)
    assert np.abs(difference).max() > 1e-3
    assert "the outputs changed" in markdown_text(at)


def test_shuffle_button_advances_the_seed_and_the_permutation():
    at = run_page(PAGE)
    first = chart(at, "shuffle_outputs")["layout"]["yaxis2"]["ticktext"]
    at.button(key="shuffle").click().run()
    assert at.slider(key="seed").value == 1
    second = chart(at, "shuffle_outputs")["layout"]["yaxis2"]["ticktext"]
    assert second != first
    _, _, difference, _ = shuffle_panels(at)
    assert np.abs(difference).max() < 1e-12
    again = run_page(PAGE, {"seed": "1"})
    assert chart(again, "shuffle_outputs")["layout"]["yaxis2"]["ticktext"] == second, "the seed reproduces it"


def test_reversal_table_shows_none_failing_and_sinusoidal_succeeding():
    at = run_page(PAGE)
    table = at.dataframe[-1].value.set_index("encoding")
    assert table.loc["sinusoidal", "right?"] == "yes" and table.loc["sinusoidal", "answer"] == "G F E D C B A </s>"
    assert table.loc["none", "right?"] == "no"
    assert table.loc["none", "held-out accuracy"] < 0.2 <= table.loc["sinusoidal", "held-out accuracy"]
    assert table.loc["none", "shuffle difference"] < 1e-12 < 1e-3 < table.loc["sinusoidal", "shuffle difference"]


def test_own_letters_drive_the_demo():
    at = run_page(PAGE, {"shuffle_input": "your own text…", "shuffle_text": "DECADE"})
    assert not at.info
    before, _, _, figure = shuffle_panels(at)
    assert before.shape == (6, 64)
    assert [t.split(" · ")[1] for t in figure["layout"]["yaxis"]["ticktext"]] == list("DECADE")


def test_attention_side_by_side_for_every_encoding():
    at = run_page(PAGE)
    figure = chart(at, "attention_by_encoding")
    titles = [a["text"] for a in figure["layout"]["annotations"]]
    assert titles == ["sinusoidal · right", "learned · right", "index · wrong", "none · wrong", "rope · right",
                      "alibi · wrong", "t5 · right"]
    assert "**T5** learns a bias for each bucket of offsets" in markdown_text(at)
    card = load_model("reverse-t5-h4-l2").card["heldout_accuracy"]
    assert f"it reverses {card:.0%} of held-out\ninputs" in markdown_text(at) and card >= 0.9
    for trace in figure["data"]:
        weights = plotly_array(trace["z"])
        np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-5)
    sinusoidal = plotly_array(figure["data"][0]["z"])
    assert np.mean([sinusoidal[k, 6 - k] for k in range(7)]) > 0.3, "cross-attention along the anti-diagonal"
    at.radio(key="att_block").set_value("encoder").run()
    at.radio(key="att_head").set_value("2").run()
    at.select_slider(key="att_layer").set_value(1).run()
    for trace in chart(at, "attention_by_encoding")["data"]:
        assert plotly_array(trace["z"]).shape == (7, 7)


# --- relative schemes --------------------------------------------------------------------------------------


@pytest.mark.parametrize("heads, length", [(4, 8), (6, 5), (1, 2)])
def test_alibi_bias_is_minus_slope_times_distance_under_causal_masking(heads, length):
    at = run_page(PAGE, {"scheme": "ALiBi", "alibi_heads": str(heads), "alibi_length": str(length)})
    figure = chart(at, "alibi_bias")
    assert len(figure["data"]) == heads
    distance = np.arange(length)[:, None] - np.arange(length)[None, :]
    for h, (trace, slope) in enumerate(zip(figure["data"], alibi_slopes(heads), strict=True)):
        bias = plotly_array(trace["z"])
        below = distance >= 0
        np.testing.assert_allclose(bias[below], (-slope * distance)[below], rtol=1e-6, atol=1e-7)
        assert np.isnan(bias[~below]).all(), "keys after the query are masked (blank)"
        assert f"head {h + 1}" in figure["layout"]["annotations"][h]["text"]
    if heads == 4:
        assert figure["layout"]["annotations"][0]["text"] == "head 1 · slope 1/4"


def test_only_the_chosen_relative_scheme_is_drawn():
    at = run_page(PAGE)
    keys = [el.proto.id.rsplit("-", 1)[-1] for el in at.get("plotly_chart")]
    assert "rope_angles" in keys and "alibi_bias" not in keys and "t5_buckets_matrix" not in keys
    at.selectbox(key="scheme").set_value("T5").run()  # a compact control: the row fits above the figure
    keys = [el.proto.id.rsplit("-", 1)[-1] for el in at.get("plotly_chart")]
    assert "t5_buckets_matrix" in keys and "rope_angles" not in keys


def test_rope_angles_and_scores():
    at = run_page(PAGE, {"rope_dim": "8", "rope_positions": "20", "rope_base": "100"})
    z, rows, cols = matrix(at, "rope_angles")
    assert z.shape == (20, 4) and cols.tolist() == [0, 1, 2, 3]
    theta = 100.0 ** (-np.arange(0, 8, 2) / 8)
    angles = np.degrees(rows[:, None] * theta[None, :])
    np.testing.assert_allclose(np.mod(z - angles + 180, 360) - 180, 0.0, atol=1e-3)
    data = line_data(at, "score q·k")
    curves = [group.sort_values("offset (key − query)") for _, group in data.groupby("query at")]
    assert len(curves) == 2
    offsets = curves[0]["offset (key − query)"].to_numpy()
    assert offsets.tolist() == list(range(-19, 20))
    expected = 2 * np.cos(offsets[:, None] * theta[None, :]).sum(-1)  # q = k = all ones
    for curve in curves:
        np.testing.assert_allclose(curve["score q·k"].to_numpy(), expected, atol=1e-9)
    at.selectbox(key="rope_vectors").set_value("random").run()
    random_curves = [g["score q·k"].to_numpy() for _, g in line_data(at, "score q·k").groupby("query at")]
    np.testing.assert_allclose(random_curves[0], random_curves[1], atol=1e-9)
    assert not np.allclose(random_curves[0], expected)


@pytest.mark.parametrize("bidirectional", ["true", "false"])
def test_t5_buckets(bidirectional):
    at = run_page(PAGE, {"scheme": "T5", "t5_length": "40", "t5_buckets": "16", "t5_max_distance": "32",
                         "t5_bidirectional": bidirectional})
    buckets, _, _ = matrix(at, "t5_buckets_matrix")
    assert buckets.shape == (40, 40)
    for offset in range(-39, 40):  # a bucket per offset: constant along every diagonal
        assert len(set(np.diagonal(buckets, offset))) == 1
    later = np.triu(buckets, 1)[np.triu_indices(40, 1)]
    assert (later.max() >= 8) if bidirectional == "true" else (later.max() == 0)
    steps = line_data(at, "bucket")
    assert steps["offset (key − query)"].tolist() == list(range(-39, 40))
    np.testing.assert_array_equal(steps["bucket"].to_numpy()[:40], buckets[39])


def test_t5_max_distance_within_the_exact_buckets_is_replaced_with_a_note():
    at = run_page(PAGE, {"scheme": "T5", "t5_buckets": "64", "t5_max_distance": "16", "t5_length": "100"})
    assert "**Max distance**" in info_text(at) and "32 is used instead of 16" in info_text(at)
    buckets, _, _ = matrix(at, "t5_buckets_matrix")
    assert buckets.min() >= 0 and buckets.max() < 64


# --- links -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params, note",
    [
        ({"positions": "5000"}, "Positions"),
        ({"d_model": "abc"}, "Dimensions"),
        ({"base": "7"}, "Base"),
        ({"kind": "rotary"}, "Encoding"),
        ({"similarity": "euclid"}, "Similarity"),
        ({"seed": "-1"}, "Shuffle seed"),
        ({"shuffle_encoding": "t6"}, "Encoder of the model"),
        ({"att_head": "9"}, "Head"),
        ({"scheme": "ALiBi", "alibi_heads": "100"}, "Heads"),
        ({"scheme": "T5", "t5_bidirectional": "maybe"}, "Both directions"),
        ({"scheme": "XPos"}, "Relative scheme"),
        ({"shuffle_input": "your own text…", "shuffle_text": "xyz 123"}, "fewer than two letters"),
        ({"shuffle_input": "your own text…", "shuffle_text": "ABCDEFGHIJKLMNOP"}, "longer than this model allows"),
        ({"nonsense": "1"}, "nonsense"),
    ],
)
def test_bad_url_values_give_notes_not_exceptions(params, note):
    at = run_page(PAGE, params)
    assert note in info_text(at)
    assert chart(at, "matrix") and chart(at, "shuffle_outputs"), "the page still draws its figures"


def test_a_link_reopens_the_same_view():
    params = {"kind": "sinusoidal", "positions": "30", "d_model": "20", "base": "1000", "similarity": "cosine",
              "seed": "5", "shuffle_encoding": "learned", "att_block": "decoder", "att_head": "3",
              "scheme": "ALiBi", "alibi_heads": "8"}
    at = run_page(PAGE, params)
    assert not at.info
    z, _, _ = matrix(at)
    assert z.shape == (30, 20)
    assert at.slider(key="seed").value == 5 and at.radio(key="att_head").value == "3"
    assert len(chart(at, "alibi_bias")["data"]) == 8


# --- the numbers the lesson quotes ---------------------------------------------------------------------------

FIELD = re.compile(r"\{[A-Za-z_]\w*(?::[^{}]*)?\}")
TYPED = re.compile(r"\d+\.\d+|\d+ ?%")


def revealed(number: int) -> str:
    at = page_test(PAGE, {"step": str(number)}).run()
    at.button(key="lesson_next").click().run()  # Reveal
    return " ".join(box.value for box in at.success)


def test_step_answers_quote_the_figures_they_are_about():
    """Each number is computed here independently (closed forms) and found in the answer shown."""
    table = sinusoid(range(4), range(4), 4, 100.0)
    cells = (table[1, 0], table[1, 1], table[1, 2], table[1, 3], table[3, 1], table[3, 2], table[3, 3])
    assert all(f"{v:.2f}" in revealed(1) for v in cells)
    similarity = table @ table.T
    assert all(f"{similarity[0, k]:.2f}" in revealed(3) for k in range(4)) and "100.0 %" in revealed(3)
    wavelengths = [2 * math.pi * 10000 ** (2 * i / 512) for i in range(256)]
    slow = sum(w > 100 for w in wavelengths)
    answer = revealed(2)
    assert f"{wavelengths[0]:.2f}" in answer and f"{wavelengths[-1]:,.0f}" in answer and f"{slow} of the 256" in answer
    answer = revealed(8)  # ALiBi, 4 heads, length 8: a key 7 back
    slopes = alibi_slopes(4)
    assert f"{7 * slopes[-1]:.3f}" in answer and f"{7 * slopes[0]:.2f}" in answer and "1/256" in answer


def test_no_number_about_a_figure_is_typed_into_the_texts():
    """Every decimal or percentage in the lesson text and the step answers is a field filled from a view;
    the only typed one is a definition (the colours of MiniLM's table stop where 99 % of its values lie)."""
    for text in [s.reveal for s in load_steps("positions")] + list(lesson_sections("positions").values()):
        assert set(TYPED.findall(FIELD.sub("", text))) <= {"99 %"}, text
    planted = "the offset explains only 46.5 % ({share:.1f} %)"
    assert TYPED.findall(FIELD.sub("", planted)) == ["46.5"], "a planted number is caught"


def test_the_index_text_says_layernorm_removes_it_with_the_models_numbers():
    # Issue #59: the index fails here because LayerNorm removes a constant added to every feature, not for
    # the reasons (size, extrapolation) the old text gave; the page says so, with the model's numbers.
    at = run_page(PAGE, {"kind": "index"})
    text = markdown_text(at)
    assert "This figure does not show those" in text and "**LayerNorm removes it.**" in text
    said = re.search(r"under section 3's\s+shuffle its outputs only move with their letters \(largest change "
                     r"(\S+)\), and it reverses\s+([\d.]+)% of held-out inputs", text)
    assert said is not None, text
    assert float(said.group(1)) < 1e-9
    assert said.group(2) == f"{100 * load_model('reverse-index-h4-l2').card['heldout_accuracy']:.1f}"
    assert "In these models it is worse: invisible" not in text


def test_section_3_answers_the_notes_fully_connected_claim_with_a_measured_box():
    # Issue #59: the notes say inputs to "most layer types (e.g., Fully Connected)" are unordered; section 3
    # shows a box measuring that a dense layer over the sequence sees the order and attention does not.
    at = run_page(PAGE)
    box = next(e for e in at.expander if e.label.endswith("Do fully connected layers ignore order?"))
    finding = " ".join(m.value for m in box.markdown)
    assert "“e.g., Fully Connected”" in finding and "so it sees the order." in finding


def test_step_answers_say_what_their_figures_show():
    # Issue #59: step 3 said "a layer can read how far apart two words are without knowing where either one
    # sits" (a layer's scores mix content and position; the figure shows rows compared); step 5 called the
    # input "a set" (letters repeat); step 8 said steep heads "watch their neighbours" (ALiBi only penalises
    # distance: content still decides).
    steps = {step.title: step.reveal for step in load_steps("positions")}
    assert "Comparing two rows tells how far apart" in steps["Only the distance counts"]
    assert "A layer can read" not in steps["Only the distance counts"]
    assert "is a set" not in steps["No encoding: the order is invisible"]
    assert "push a head towards its neighbours" in steps["ALiBi: a penalty for distance"]
    assert "watch their neighbours" not in steps["ALiBi: a penalty for distance"]


def test_the_prose_cites_its_reasons_and_drops_the_unmeasured_ones():
    # Issue #59: why-sentences either cite where they are established or say what the figure shows.
    sections = lesson_sections("positions")
    assert "Vaswani et al., *Attention Is\nAll You Need*" in sections["matrix: why sines and cosines"]
    assert "Su et al., *RoFormer*" in sections["RoPE"]
    assert "Press et al., *Train Short,\nTest Long*" in sections["ALiBi"]
    assert "Raffel et al." in sections["T5"] and "rarely needs" not in sections["T5"]
    assert "Steep\nheads look at their neighbours" not in sections["ALiBi"]
    # "only positions supply" is not what section 3 shows: the encoder's outputs carry no order without them
    assert "only positions supply" not in sections["reversal: none against sinusoidal"]
