"""AppTest: the decoder page, every control driven, what it draws read back and checked against the
library (decode_steps, the cost functions, count_parameters on models built here)."""

import json
import re

import numpy as np
import pytest
import torch

from explorer.analysis.cost import cache_setup_cost, generation_step_cost, teacher_forced_cost
from explorer.analysis.decoding import decode_steps
from explorer.analysis.kv_timing import CacheSweep, cache_sweep
from explorer.kit.prose import lesson_text
from explorer.kit.steps import load_steps
from explorer.lessons.decoder import view as decoder_lesson
from explorer.lessons.decoder.view import CLOCK, SWEEP_LENGTHS, WIDER, timing_claim, wider_claim
from explorer.model.parameters import count_parameters
from explorer.model.transformer import Transformer, TransformerConfig
from explorer.serve import runtime
from explorer.training.pretrained import load_model
from harness.apptest import (
    assert_no_exception,
    info_text,
    page_test,
    plotly_array,
    plotly_array_1d,
    plotly_figures,
    run_page,
)
from harness.claims import answer

PAGE = "explorer/lessons/decoder/decoder.py"


def step_panels(at) -> dict:
    data = plotly_figures(at)[0]["data"]
    return {"bars": data[0], "self": plotly_array(data[1]["z"]),
            "cross": plotly_array(data[2]["z"]) if len(data) > 2 else None}


def library_steps(name: str, letters: str, **kwargs):
    loaded = load_model(name)
    task = loaded.task
    if task.architecture == "encoder-decoder":
        return task, decode_steps(loaded.model, task.encode(letters.split()), len(letters.split()) + 1,
                                  task.index["<s>"], **kwargs)
    return task, decode_steps(loaded.model, task.encode(letters.split()), 4, None, **kwargs)


def test_default_view_steps_through_a_reversal():
    at = run_page(PAGE)
    assert not at.info and not at.error
    _, steps = library_steps("reverse-sinusoidal-h4-l2", "H E L L O")
    panels = step_panels(at)
    # Step 1: the bars are the next-token distribution's top five, the likeliest first.
    bars = panels["bars"]
    top = np.sort(steps[0].probs)[::-1][:5]
    np.testing.assert_allclose(plotly_array_1d(bars["x"]), top, atol=1e-6)
    assert bars["customdata"][0] == "O"
    # Layer 2, mean over heads; only the first row computed, and it reads one key.
    expected = steps[0].self_weights[1].mean(0)
    np.testing.assert_allclose(panels["self"][0, :1], expected, atol=1e-6)
    assert np.isnan(panels["self"][1:]).all() and np.isnan(panels["self"][0, 1:]).all()
    np.testing.assert_allclose(panels["cross"][0], steps[0].cross_weights[1].mean(0), atol=1e-6)
    assert np.isnan(panels["cross"][1:]).all()
    assert any("writes **`O`**" in m.value for m in at.markdown)
    assert len(at.get("plotly_chart")) == 7


def test_the_step_slider_grows_the_triangle_one_row_and_one_key_at_a_time():
    at = run_page(PAGE)
    _, steps = library_steps("reverse-sinusoidal-h4-l2", "H E L L O")
    for t in (2, 4, 6):
        at.slider(key="t").set_value(t).run()
        z = step_panels(at)["self"]
        for k in range(t):
            visible = z[k][~np.isnan(z[k])]
            assert len(visible) == k + 1, "step k + 1 reads the k + 1 keys written so far"
            np.testing.assert_allclose(visible, steps[k].self_weights[1].mean(0), atol=1e-6)
        assert np.isnan(z[t:]).all(), "the future is blank"
        written = " ".join("OLLEH"[:t - 1])
        assert any(f"**written so far** `{written}`" in m.value for m in at.markdown)


@pytest.mark.parametrize("layer, head", [(1, "1"), (2, "3"), (1, "mean")])
def test_layer_and_head_choose_the_rows_drawn(layer, head):
    at = run_page(PAGE, {"t": "5", "layer": str(layer), "head": head})
    _, steps = library_steps("reverse-sinusoidal-h4-l2", "H E L L O")
    panels = step_panels(at)

    def pick(weights):
        return weights[layer - 1].mean(0) if head == "mean" else weights[layer - 1, int(head) - 1]

    for k in range(5):
        np.testing.assert_allclose(panels["self"][k, :k + 1], pick(steps[k].self_weights), atol=1e-6)
        np.testing.assert_allclose(panels["cross"][k], pick(steps[k].cross_weights), atol=1e-6)


def test_sort_and_own_text():
    at = run_page(PAGE, {"task": "sort"})
    assert any("P E A C H" in m.value for m in at.markdown)
    at.selectbox(key="input_sort").set_value("your own text…").run()
    at.text_area(key="text_sort").input("BADGE").run()
    _, steps = library_steps("sort-sinusoidal-h4-l2", "B A D G E")
    z = step_panels(at)["cross"]
    assert z.shape == (6, 5)
    np.testing.assert_allclose(z[0], steps[0].cross_weights[1].mean(0), atol=1e-6)
    assert not at.exception


def test_induction_is_decoder_only_without_cross_attention():
    at = run_page(PAGE, {"task": "induction", "t": "4", "head": "2"})
    panels = step_panels(at)
    assert panels["cross"] is None
    task, steps = library_steps("induction-sinusoidal-h2-l2", "t3 t7 t1 t9 t4 t3")
    z = panels["self"]
    assert z.shape == (4, 9)  # four steps; the prompt's six keys and three written tokens
    for k in range(4):
        np.testing.assert_allclose(z[k, :6 + k], steps[k].self_weights[1, 1], atol=1e-6)
    assert [task.vocab[s.token] for s in steps] == ["t7", "t1", "t9", "t4"]
    # A prompt with no repeat to finish: free running only, no loss, a note.
    at = run_page(PAGE, {"task": "induction", "input_induction": "your own text…", "text_induction": "t1 t2 t3"})
    assert "Teacher forcing needs the right answer" in info_text(at)
    assert len(at.get("plotly_chart")) == 6  # no loss chart
    assert not at.exception


def test_a_mistake_propagates_under_free_running_only():
    at = run_page(PAGE, {"task": "sort", "mistake": "2"})
    spec = plotly_figures(at)[1]
    text = spec["data"][0]["text"]
    assert text[1] == ["A", "B", "C", "E", "H", "P"], "free running writes B, then carries on from it"
    assert text[3][1] == "B" and text[3][2:] == ["E", "H", "P", "&lt;/s&gt;"], "teacher forcing recovers at once"
    assert text[2][2] == "C", "teacher forcing reads the right token after the mistake"
    loss = plotly_figures(at)[2]["data"]
    task, free = library_steps("sort-sinusoidal-h4-l2", "P E A C H", replace={1: 4})  # 4 = "B"
    right = task.encode([*"ACEHP", "</s>"])
    expected = [-np.log(s.probs[r]) for s, r in zip(free, right, strict=True)]
    np.testing.assert_allclose(plotly_array_1d(loss[0]["y"]), expected, rtol=1e-5, atol=1e-5)
    assert max(plotly_array_1d(loss[1]["y"])) < 0.01
    assert any("writes **4 of 4** later tokens wrong" in m.value for m in at.markdown)
    # Why teacher forcing is used (one parallel pass, shown here) and not the notes' reason
    text = [" ".join(m.value.split()) for m in at.markdown]
    assert any(t.startswith("Here one forward pass over `<s> A C E H P` gives all 6 losses") for t in text)
    assert any(t.startswith("**Not to stop errors spreading.**") and "**exposure bias**" in t for t in text)
    at.select_slider(key="mistake").set_value("none").run()
    assert plotly_figures(at)[1]["data"][0]["text"][1] == ["A", "C", "E", "H", "P", "&lt;/s&gt;"]  # escaped


def test_cache_counts_are_the_cost_functions_for_this_example():
    at = run_page(PAGE, {"t": "3"})
    counts = plotly_figures(at)[4]["data"]
    config = load_model("reverse-sinusoidal-h4-l2").model.config
    uncached = [generation_step_cost(T, 64, 2, config.vocab_size, T_src=5).total for T in range(1, 7)]
    cached = [generation_step_cost(T, 64, 2, config.vocab_size, T_src=5, cache=True).total for T in range(1, 7)]
    np.testing.assert_allclose(plotly_array_1d(counts[0]["y"]), uncached)
    np.testing.assert_allclose(plotly_array_1d(counts[1]["y"]), cached)
    setup = cache_setup_cost(64, 2, 5).total
    assert any(f"{uncached[2]:,} multiplications without the cache and\n{cached[2]:,} with it" in m.value
               for m in at.markdown)
    assert any(f"{sum(cached) + setup:,} with" in m.value for m in at.markdown)
    encoder = cache_setup_cost(64, 2, 5).encoder  # once, without the cache too
    assert any(f"{sum(uncached) + encoder:,} without" in m.value for m in at.markdown)
    forward = teacher_forced_cost(6, 64, 2, config.vocab_size, T_src=5).total  # the encoder included
    assert any(f"teacher-forced forward pass over the same output costs {forward:,} (its backward" in " ".join(
        m.value.split()) for m in at.markdown)
    intro = next(m.value for m in at.markdown if m.value.startswith("**What the loop recomputes.**"))
    assert "once, before the first step, with a cache or\nwithout" in intro and "unchanged source" not in intro
    grid = plotly_array(plotly_figures(at)[3]["data"][1]["z"])  # with the cache: enc 1, enc 2, dec 1, dec 2, logits
    assert grid.shape == (5, 5)
    np.testing.assert_array_equal(grid[2, :3], [0.5, 0.5, 1.0])  # kept, kept, computed now
    # The stopwatch: the sweeps this process measured (once per shape), this model's shape and the wider one,
    # each without and with the cache, and the sentence they support at this step's length (5 + 3 = 8).
    times = [line for line in plotly_figures(at)[5]["data"] if line["mode"] == "lines+markers"]
    own, wider = (cache_sweep(64, 2, 4, SWEEP_LENGTHS, clock=CLOCK), cache_sweep(*WIDER, SWEEP_LENGTHS, clock=CLOCK))
    for line, values in zip(times, (own.uncached, own.cached, wider.uncached, wider.cached), strict=True):
        np.testing.assert_array_equal(plotly_array_1d(line["x"]), SWEEP_LENGTHS)
        np.testing.assert_allclose(plotly_array_1d(line["y"]), values * 1000, rtol=1e-6)
        assert np.all(plotly_array_1d(line["y"]) > 0)
    name, values = timing_claim(own, 8)
    assert any(lesson_text("decoder", name, wider=wider_claim(wider), **values) in m.value for m in at.markdown)


def test_architecture_parameters_are_counted_on_built_models():
    at = run_page(PAGE, {"arch_d": "128", "arch_layers": "3", "arch_vocab": "1000"})
    table = at.table[0].value.set_index("architecture")

    def built(architecture, layers):  # pre-norm, as the shipped models: a final LayerNorm per stack
        torch.manual_seed(0)
        return count_parameters(Transformer(TransformerConfig(vocab_size=1000, d_model=128, n_heads=8, norm="pre",
                                                              n_layers=layers, architecture=architecture)))

    assert table.loc["encoder-only", "parameters"] == built("encoder", 3)
    assert table.loc["decoder-only", "parameters"] == built("decoder", 3)
    assert table.loc["decoder-only, twice as deep", "parameters"] == built("decoder", 6)
    assert table.loc["encoder–decoder", "parameters"] == built("encoder-decoder", 3)
    share = built("decoder", 3) / built("encoder-decoder", 3)
    assert any(f"**{share:.0%}**" in m.value for m in at.markdown)
    shapes = plotly_figures(at)[6]["layout"]["shapes"]
    assert sum(s.get("fillcolor") == "#0072B2" for s in shapes) == 3, "a cross-attention block per decoder layer"
    arrows = [a for a in plotly_figures(at)[6]["layout"]["annotations"] if a.get("showarrow")]
    assert len(arrows) == 3 and len({(a["ax"], a["ay"]) for a in arrows}) == 1, "all from the encoder's output"
    # A LayerNorm before each block, said in words ("pre-norm" is the depth lesson's, with Add & Norm)
    caption = next(c.value for c in at.caption if "LayerNorm" in c.value)
    assert "before each attention and feed-forward block" in caption and "pre-norm" not in caption
    for name in ("reverse-sinusoidal-h4-l2", "induction-sinusoidal-h2-l2"):
        model = load_model(name).model
        norms = [m for m in model.modules() if isinstance(m, torch.nn.LayerNorm)]
        assert model.config.norm == "pre" and norms and all(m.normalized_shape == (64,) for m in norms)


def test_the_lesson_reveals_state_true_numbers():
    """The numbers the lesson steps quote, recomputed."""
    steps = [answer("decoder", step) for step in load_steps("decoder")]  # as shown after Reveal
    _, reverse = library_steps("reverse-sinusoidal-h4-l2", "H E L L O")
    assert f"{reverse[0].cross_weights[1].mean(0)[-1]:.2f}" == "0.98" and "0.98" in steps[0]
    assert len(reverse[-1].self_weights[0, 0]) == 6 and "Six" in steps[1]
    _, sort = library_steps("sort-sinusoidal-h4-l2", "P E A C H")
    row = sort[0].cross_weights[1].mean(0)
    assert (f"{row[2]:.2f}", f"{row[3]:.2f}") == ("0.77", "0.23")
    counts = [(generation_step_cost(11, 64, 2, 19, T_src=10).total,
               generation_step_cost(11, 64, 2, 19, T_src=10, cache=True).total)]
    # the encoder (1,008,640) runs once before step 1, with the cache or without: it is in neither count
    assert counts == [(1_497_920, 121_280)] and round(counts[0][0] / counts[0][1]) == 12
    assert "About 12 times" in steps[5] and "1,497,920" in steps[5] and "121,280" in steps[5]
    at = run_page(PAGE, {"arch_d": "512", "arch_layers": "6", "arch_vocab": "32000"})
    table = at.table[0].value.set_index("architecture")
    share = table.loc["decoder-only", "parameters"] / table.loc["encoder–decoder", "parameters"]
    assert f"{share:.0%}" == "55%" and "55%" in steps[7]


@pytest.mark.parametrize("params, expected_in_note", [
    ({"t": "99"}, "Step"), ({"task": "recall"}, "Model"), ({"mistake": "9"}, "Wrong token at step"),
    ({"arch_d": "100"}, "Width"), ({"head": "7"}, "Head"), ({"nonsense": "1"}, "nonsense"),
])
def test_bad_url_values_fall_back_with_a_note(params, expected_in_note):
    at = run_page(PAGE, params)
    assert expected_in_note in info_text(at)
    assert len(at.get("plotly_chart")) == 7


@pytest.fixture
def measured(monkeypatch):
    """Inject a stopwatch measurement: `measured(uncached_ms, cached_ms)`, functions of the lengths,
    stand in for explorer.analysis.kv_timing.cache_sweep (the runtime's cache emptied around it)."""

    def inject(uncached_ms, cached_ms):
        def fake(d_model, n_layers, n_heads, lengths, repeats=5, seed=0, clock=None):
            lengths = np.array(lengths)
            return CacheSweep(d_model, n_layers, n_heads, lengths, uncached_ms(lengths) / 1000,
                              cached_ms(lengths) / 1000, repeats)

        monkeypatch.setattr(decoder_lesson, "cache_sweep", fake)
        runtime._shown.cache_clear()

    yield inject
    runtime._shown.cache_clear()


def page_text(at) -> str:
    """Every Markdown element's text, its line breaks as spaces."""
    return " ".join(" ".join(m.value.split()) for m in at.markdown)


def test_the_stopwatch_sentence_follows_the_measurement_both_ways(measured):
    # The cache wins from T = 12 on: at step 1 of H E L L O the step reads T = 6 tokens.
    measured(lambda n: 0.01 * n, lambda n: np.full(len(n), 0.1))
    at = run_page(PAGE)
    assert "the cache does not pay yet" in page_text(at) and "from T = 12 on" in page_text(at)
    assert "here the cache pays" not in page_text(at)
    # the cost's parts are not measured: the sentence says so rather than stating them as the reason
    assert "fixed cost per cached step, not broken down here" in page_text(at)
    assert "fixed cost per cached step — Python" not in page_text(at)
    stars = [line["name"] for line in plotly_figures(at)[5]["data"] if line["mode"] == "markers"]
    assert stars == ["d=64, 2 layers: the cache wins from T = 12", "d=256, 2 layers: the cache wins from T = 12"]
    assert "this step: T = 6" in plotly_figures(at)[5]["layout"]["annotations"][0]["text"]
    # The same measurement at a longer input: the last step of ten letters reads T = 21.
    at.selectbox(key="input_reverse").set_value("J A B B E D C O D E").run()
    at.slider(key="t").set_value(11).run()
    assert "T = 21 tokens, and here the cache pays" in page_text(at) and "not pay yet" not in page_text(at)
    # Another machine, where the cache wins at every length: the same step 1 now pays.
    measured(lambda n: 0.01 * n, lambda n: np.full(len(n), 0.001))
    at = run_page(PAGE)
    assert "here the cache pays" in page_text(at) and "not pay yet" not in page_text(at)
    # And one where it never wins: the sentence says so, with no crossover claimed.
    measured(lambda n: np.full(len(n), 0.1), lambda n: np.full(len(n), 0.2))
    at = run_page(PAGE)
    assert "not faster even at the longest length measured, T = 128" in page_text(at)
    assert not [line for line in plotly_figures(at)[5]["data"] if line["mode"] == "markers"], "no crossover drawn"


def test_step_texts_agree_with_the_view_they_reveal():
    """A step that makes the model write a wrong token names it and the right one; after Reveal the
    step line, the forcing rows and the reveal's numbers say the same as the view."""
    pattern = re.compile(r"made to write (\S+) instead of (\S+) at step (\d+)")
    checked = 0
    for number, step in enumerate(load_steps("decoder"), start=1):
        match = pattern.search(step.predict)
        if match is None:
            continue
        wrong, right, at_step = match[1], match[2], int(match[3])
        assert step.settings["mistake"] == str(at_step)
        at = page_test(PAGE, {"step": str(number)}).run()
        at.button(key="lesson_next").click().run()
        assert_no_exception(at)
        line = next(m.value for m in at.markdown if "**written so far**" in m.value)
        if step.settings["t"] == at_step:
            assert f"is made to write **`{wrong}`**" in line and f"its own choice was `{right}`" in line, line
        else:
            written = line.split("**written so far** `")[1].split("`")[0].split()
            assert written[at_step - 1] == wrong, line
        assert f"writes **`{right}`**" not in line
        forcing = next(f for f in plotly_figures(at) if "text" in f["data"][0])  # the step's section comes first
        rows = forcing["data"][0]["text"]  # free reads, free writes, forced reads, forced writes
        assert rows[1][at_step - 1] == wrong and rows[2][at_step] == right
        checked += 1
        # The reveal's words against the rows it describes.
        free_after, forced_after = rows[1][at_step:], rows[3][at_step:]
        revealed = answer("decoder", step)
        if "Free running: all four" in revealed:
            assert "writes **4 of 4** later tokens wrong" in page_text(at) and "teacher forcing 0" in page_text(at)
            assert " ".join(free_after[:4]) in revealed  # "writes C E H P"
        if "t7 and then t1" in revealed:
            assert free_after[:2] == ["t7", "t1"] and forced_after[:2] == ["t9", "t4"] and rows[2][at_step] == "t1"
    assert checked == 2, "the steps that put a mistake in (4 and 5)"


@pytest.mark.parametrize("task", ["reverse", "induction"])
def test_the_reading_names_the_panel_where_self_attention_is_drawn(task):
    # An encoder–decoder's step figure has three panels (self-attention in the middle); a decoder-only
    # model's two (self-attention on the right).
    at = run_page("explorer/lessons/decoder/decoder.py", {"task": task})
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    panels = sum(1 for key in spec["layout"] if re.fullmatch(r"xaxis\d*", key))
    reading = next(c.value for c in at.caption if c.value.startswith("**Reading it.**"))
    where = {3: "Middle", 2: "Right"}[panels]
    assert f"{where}: decoder self-attention" in reading, (panels, reading)


@pytest.mark.parametrize("number", [7, 8])
def test_the_architectures_answers_quote_what_their_figure_prints(number):
    """Steps 7 and 8 quote parameter counts and shares: each is printed above its stack in the figure the
    answer stands over (they were only in a table further down), and neither answer names a weight count
    per layer the figure does not show."""
    step = load_steps("decoder")[number - 1]
    at = run_page(PAGE, {k: str(v) for k, v in step.settings.items()})
    table = at.table[0].value.set_index("architecture")
    printed = " ".join(a["text"] for a in plotly_figures(at)[6]["layout"]["annotations"])
    both, decoder = table.loc["encoder–decoder"], table.loc["decoder-only"]
    said = answer("decoder", step)
    share = f"{decoder['parameters'] / both['parameters']:.0%}"
    assert share in said and f"<b>{share}</b>" in printed
    quoted = [decoder["parameters"], both["parameters"]]  # step 8 also the decoder's layers and embeddings
    quoted += [decoder["in the layers"], decoder["embeddings and output"]] if number == 8 else []
    for value in quoted:
        assert (f"{value:,}" if value < 1e6 else f"{value / 1e6:.1f} million") in said, (value, said)
        assert (f"{value:,}" if value < 1e6 else f"{value / 1e6:.1f} M") in printed, (value, printed)
    assert "d²" not in said
