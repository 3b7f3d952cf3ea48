"""AppTest: the length-and-memory page, its controls and every lesson step, read back from the charts."""

import io
import re

import numpy as np
import pandas as pd
import pytest

from explorer.analysis.length import REVERSAL_MODELS, accuracy_by_length
from explorer.kit.steps import load_steps
from explorer.lessons.length.view import LENGTHS
from harness.apptest import (
    assert_no_exception,
    downloaded_text,
    heatmap_z,
    info_text,
    page_test,
    plotly_figures,
    run_page,
    run_page_with_downloads,
    vega_data,
)
from harness.claims import answer

PAGE = "explorer/lessons/length/length.py"



def markdown(at) -> str:
    return "\n".join(el.value for el in at.markdown)


def test_default_view_accuracy_by_length_attention_and_the_learned_refusal():
    at, manager = run_page_with_downloads(PAGE)
    assert not at.info
    data = vega_data(at, 0)
    sinusoidal = data[data["encoding"] == "sinusoidal"].sort_values("letters")
    tested = [n for n in LENGTHS if n <= 30]
    expected = accuracy_by_length(REVERSAL_MODELS["sinusoidal"], tested)
    np.testing.assert_array_equal(sinusoidal["accuracy"], [expected[n] for n in tested])
    learned = data[data["encoding"] == "learned table"]
    assert learned["letters"].max() == 10, "no number is drawn past the learned table's rows"
    # the learned table's refusal is how it is built, not a fault: a caption, no warning on every step
    assert any("Why the learned table's line stops" in c.value and "position 11" in c.value and "11 rows" in c.value
               for c in at.caption)
    assert not at.warning
    # the lines that lie on one another are named, from the data drawn
    coincide = next(c.value for c in at.caption if c.value.startswith("Lines on top of one another"))
    for encoding in data["encoding"].unique():
        past = data[(data["encoding"] == encoding) & (data["letters"] > 10)]["accuracy"]
        assert (encoding in coincide.split("at 100 %")[1]) == (len(past) > 0 and (past == 0).all()), encoding
    # Section 2: the seen and the unseen length's cross-attention, rows that sum to 1.
    seen, unseen = heatmap_z(at, 0), heatmap_z(at, 1)
    assert seen.shape == (11, 10) and unseen.shape == (16, 15)
    np.testing.assert_allclose(unseen.sum(axis=1), 1, atol=1e-5)
    text = markdown(at)
    for claim in ("inputs of 2–10 letters", "lengths tested, from 2 to 30", "BERT (2018)", "GPT-3 (2020)",
                  "Brown et al.", "Devlin et al.", "11 rows, positions\n0–10", "position 15 reads position 0 after"):
        assert claim in text, claim
    labels = [b.proto.label for b in at.get("download_button")]
    assert len(labels) == 11
    csv = downloaded_text(manager, at.get("download_button")[0])
    frame = pd.read_csv(io.StringIO(csv))
    assert set(frame["encoding"]) == {"sinusoidal", "learned table", "raw index", "no encoding", "RoPE", "ALiBi",
                                      "T5 buckets"}


def test_sidebar_controls_change_the_sweep_and_the_model_drawn():
    at = run_page(PAGE, {"longest": "16", "encoding": "RoPE", "n": "12"})
    assert not at.info
    assert vega_data(at, 0)["letters"].max() == 16
    assert heatmap_z(at, 1).shape == (13, 12)
    assert "`reverse-rope-h4-l2`" in markdown(at)
    at.selectbox(key="encoding").set_value("learned").run()
    assert_no_exception(at)
    assert any("12 letters: refused" in i.value for i in at.info)
    assert len(plotly_figures(at)) == 5  # six by default: the unseen heatmap is replaced by the reason
    at.slider(key="n").set_value(20).run()
    assert any("20 letters: refused" in i.value and "position 20" in i.value for i in at.info)


def test_t5_runs_past_the_band_and_its_attention_is_drawn_at_a_length_it_never_saw():
    """T5's bias is looked up by buckets of offsets, and every offset has one: no refusal, a number at
    every length tested, and its cross-attention at 20 letters."""
    at = run_page(PAGE, {"encoding": "T5 buckets", "n": "20"})
    assert not at.info and at.selectbox(key="encoding").value == "t5"
    data = vega_data(at, 0)
    t5 = data[data["encoding"] == "T5 buckets"].sort_values("letters")
    tested = [n for n in LENGTHS if n <= 30]
    expected = accuracy_by_length(REVERSAL_MODELS["t5"], tested)
    np.testing.assert_array_equal(t5["letters"], tested)
    np.testing.assert_array_equal(t5["accuracy"], [expected[n] for n in tested])
    text = markdown(at)
    assert "**The T5 buckets model** (`reverse-t5-h4-l2`)" in text
    assert "(sinusoidal, RoPE, T5 buckets) still *run* past it" in text
    assert "at 30 letters its encoder needs 6 buckets and its decoder 10" in text.replace("\n", " ")
    assert not any("T5" in w.value for w in (*at.warning, *at.info, *at.caption) if "line stops" in w.value
                   or "refused" in w.value)
    seen, unseen = heatmap_z(at, 0), heatmap_z(at, 1)
    assert seen.shape == (11, 10) and unseen.shape == (21, 20)
    np.testing.assert_allclose(unseen.sum(axis=1), 1, atol=1e-5)
    summary = at.dataframe[0].value
    row = summary[summary["encoding"] == "T5 buckets"].iloc[0]
    assert row["model"] == "reverse-t5-h4-l2" and row["at 11"] == expected[11] and row["at 30"] == expected[30]


def test_section_controls_memory_gqa_tiled_window():
    at = run_page(PAGE)
    at.select_slider(key="mem_T").set_value(32768).run()
    at.radio(key="cache_bytes").set_value(4).run()
    table = at.dataframe[1].value
    llama = table[table["configuration"] == "Llama-2-7B"].iloc[0]
    assert llama["KV cache"] == "34.4 GB"  # 2 · 32 · 32 · 128 · 32768 · 4
    assert "source" not in table.columns, "the sources are listed under the table, not in a column past its edge"
    sources = next(e for e in at.expander if e.label == "Where these shapes come from").markdown[0].value
    assert "- **Llama-2-7B**: Touvron et al. 2023" in sources
    at.select_slider(key="gqa_h").set_value(4).run()
    at.select_slider(key="gqa_g").set_value(1).run()
    assert "all 4 query heads but only 1 key/value head:" in markdown(at)
    at.select_slider(key="gqa_g").set_value(4).run()  # as many K/V heads as query heads: nothing shared
    said = markdown(at).replace("\n", " ")
    assert "each K/V head is read by one query head only: nothing is shared" in said and "shared by 1" not in said
    at.select_slider(key="gqa_g").set_value(1).run()
    assert "are drawn next to each other: all of them read the same one." in markdown(at).replace("\n", " ")
    grid = next(f for f in plotly_figures(at) if len(f["data"]) == 4)
    assert [a["text"] for a in grid["layout"]["annotations"]] == [f"head {i} · K/V 1" for i in range(1, 5)]
    at.select_slider(key="tile_T").set_value(16).run()
    at.slider(key="block").set_value(5).run()
    at.toggle(key="tile_causal").set_value(True).run()
    at.slider(key="tile_step").set_value(4).run()
    assert_no_exception(at)
    text = markdown(at)
    assert "At most **80 scores**" in text and "**256** in the whole 16 × 16" in text
    at.select_slider(key="win_T").set_value(32).run()
    at.slider(key="window").set_value(1).run()
    at.slider(key="win_layers").set_value(8).run()
    assert "never reads position 0" in markdown(at)
    at.slider(key="window").set_value(32).run()
    assert "position 31 reads position 0 after **1 layer**" in markdown(at)
    assert not at.info


def test_the_grouped_query_grid_numbers_heads_from_1_and_its_sentence_says_where_sharing_heads_stand():
    """Default h = 8, g = 2: two rows of four panels, each row reading one K/V head, as the text says.
    Heads are numbered from 1 on the titles and in the CSV, as on the attention lesson's grids."""
    at, manager = run_page_with_downloads(PAGE)
    grid = next(f for f in plotly_figures(at) if len(f["data"]) == 8)
    titles = [a["text"] for a in grid["layout"]["annotations"]]
    assert titles == [f"head {i} · K/V {1 if i <= 4 else 2}" for i in range(1, 9)]
    text = markdown(at).replace("\n", " ")
    assert "each K/V head is shared by 4 query heads" in text
    assert "are drawn next to each other: each row of grids shares one." in text
    button = [b for b in at.get("download_button") if b.proto.label == "Download the weights (CSV)"][-1]
    frame = pd.read_csv(io.StringIO(downloaded_text(manager, button)))
    assert sorted(set(frame["query head"])) == list(range(1, 9)) and sorted(set(frame["key/value head"])) == [1, 2]


def test_the_memory_charts_draw_every_model_and_equal_bytes_once():
    """Mistral-7B and Llama-3-8B keep the same KV cache: one line, its legend entry naming both (it was
    two entries, one line hidden under the other); every configuration of the table is named once."""
    at = run_page(PAGE)
    configurations = list(at.dataframe[1].value["configuration"])
    text = markdown(at).replace("\n", " ")
    assert "share one line, and its legend entry names them all" in text
    for index, what in ((1, "KV cache"), (2, "scores")):
        data = vega_data(at, index)
        lines = {label: part.sort_values("T").iloc[:, 1].to_numpy() for label, part in data.groupby("line", sort=False)}
        values = list(lines.values())
        assert all(not np.array_equal(a, b) for i, a in enumerate(values) for b in values[:i])
        named = [label.replace("\n", " ") for label in lines]
        assert all(sum(c in label for label in named) == 1 for c in configurations), (named, configurations)
        assert any(f"(same {what})" in label for label in named)
    kv = [label.replace("\n", " ") for label in vega_data(at, 1)["line"].unique()]
    assert "Mistral-7B (GQA) and Llama-3-8B (GQA) (same KV cache)" in kv


def test_a_shrinking_range_puts_a_dependent_control_back_to_its_default():
    at = run_page(PAGE, {"tile_T": "32", "block": "2", "tile_step": "16"})
    assert "After key block 16 of 16" in plotly_figures(at)[3]["layout"]["title"]["text"]
    at.slider(key="block").set_value(16).run()
    assert_no_exception(at)
    assert at.slider(key="tile_step").value == 1


def test_every_step_in_turn_with_next():
    steps = load_steps("length")
    at = page_test(PAGE).run()
    for number, step in enumerate(steps, start=1):
        at.button(key="lesson_next").click().run()
        assert at.session_state["step"] == number
        assert not at.get("plotly_chart") and not at.get("vega_lite_chart"), "hidden until Reveal"
        at.button(key="lesson_next").click().run()  # Reveal
        assert_no_exception(at)
        assert sum(answer("length", step) in el.value for el in at.success) == 1  # filled from the view
        for key, value in step.settings.items():
            assert at.session_state[key] == value


@pytest.mark.parametrize(("params", "expected"), [
    ({"longest": "17"}, "Longest input"), ({"encoding": "t5"}, "Model whose attention"), ({"n": "10"}, "input length"),
    ({"gqa_g": "3"}, "Key/value heads"), ({"block": "0"}, "Keys per block"), ({"window": "99"}, "Window"),
    ({"tile_step": "9"}, "Key blocks read"),
])
def test_bad_url_values_fall_back_with_a_note(params, expected):
    at = run_page(PAGE, params)
    assert expected in info_text(at)
    assert len(vega_data(at, 0)) > 0


@pytest.mark.parametrize("block", ["4", "12"])
def test_tiled_says_the_matrix_is_never_made_only_when_a_tile_is_smaller(block):
    at = run_page("explorer/lessons/length/length.py", {"tile_T": "12", "block": block})
    text = markdown(at)
    whole = block == "12"  # one block of every key: the tile is the whole 12 × 12 matrix
    assert ("which is never made" in text) is not whole and ("tiling saves nothing" in text) is whole
    assert ("the method itself never has it" in text) is not whole


@pytest.mark.parametrize("window", ["1", "2", "4"])
def test_a_window_of_one_carries_nothing_between_positions(window):
    text = markdown(run_page("explorer/lessons/length/length.py", {"window": window, "win_layers": "8"}))
    assert ("each layer carries it 0 positions" in text) is False
    assert ("no position reads another" in text) is (window == "1")
    assert ("stacking layers widens the reach" in text) is (window != "1")


def test_the_longest_control_says_the_lengths_are_a_selection():
    at = run_page("explorer/lessons/length/length.py", {"longest": "40"})
    slider = next(w for w in at.get("select_slider") if w.label.startswith("Longest input tested"))
    lengths = sorted({int(n) for n in re.findall(r"\b(\d+)\b", markdown(at).split("lengths tested, from")[1]
                                                     .split(".")[0])})
    assert lengths != list(range(2, 41)) and "Selected lengths from 2 up to this" in slider.help
