"""Guards that check what their sentence says (a review found several checking something weaker: letters
where the sentence is about places, a padding row where it is about the '?', nothing at all about the input
repeating).  Each case below showed its sentence falsely, or hid a true one, before."""

import dataclasses

import numpy as np
import pytest

from explorer.analysis.kv_timing import CacheSweep
from explorer.analysis.timing import Timing, slower_at, slower_from
from explorer.kit.claims import say
from explorer.kit.steps import load_steps
from explorer.lessons.attention.view import AttentionSettings, attention_lesson_view
from explorer.lessons.cost.spec import COST
from explorer.lessons.decoder.spec import DECODER, DECODER_CACHE
from explorer.lessons.decoder.view import timing_claim
from explorer.lessons.length.spec import LENGTH, LENGTH_MEMORY
from explorer.lessons.lookup.spec import LOOKUP
from explorer.lessons.lookup.view import LOOKUP_CLAIMS
from explorer.lessons.positions import claims as facts
from explorer.lessons.positions.spec import POSITION_MODELS, POSITION_RELATIVE, POSITIONS
from explorer.model.positional import t5_relative_buckets
from explorer.serve import runtime
from harness.claims import step_settings


def notices(**changes) -> list[str]:
    view = attention_lesson_view(dataclasses.replace(AttentionSettings(), **changes))
    return [name for name, _ in view.notices if name.startswith("notice")]


def typed(task: str, text: str, **changes) -> list[str]:
    return notices(task=task, **{f"input_{task}": text, f"text_{task}": text}, **changes)


def test_reversal_runs_along_the_anti_diagonal_by_place_not_by_letter():
    assert notices(block="cross") == ["notice: reverse cross"]  # the default model: it does
    # one head, two layers: rows read keys [4, 4, 3, 1, 0]; by letter the double L made it 80 %
    assert typed("reverse", "H E L L O", block="cross", heads=1) == []
    assert typed("reverse", "A A A A A", block="cross", layers=1) == []  # every row on one key


def test_sorting_traces_a_permutation_only_where_the_input_was_out_of_order():
    assert notices(task="sort", block="cross") == ["notice: sort cross"]
    assert typed("sort", "A B C D E", block="cross") == []  # sorted already: the permutation is the diagonal


def test_induction_needs_an_input_whose_second_half_repeats_the_first():
    assert notices(task="induction", heads=2) == ["notice: induction encoder"]  # the shipped model
    assert typed("induction", "t1 t2 t3 t4 t5 t6 t7 t8 t1 t2", heads=2) == []


def test_recall_follows_the_row_of_the_question_mark():
    assert notices(task="recall") == ["notice: recall encoder"]
    assert notices(task="recall", mask="padding") == ["notice: recall encoder"]  # the last row is <pad> there
    assert typed("recall", "C A F B H D E G") == []  # no '?' to follow


def test_coreference_under_the_padding_mask_reads_the_last_word_not_the_padding():
    assert notices(task="coreference", mask="padding") == ["notice: coreference encoder"]


@pytest.mark.parametrize(("claim", "changes"), [
    ("key_retrieves", {"q1": 10.0, "q2": 10.0, "q3": 10.0, "q4": 10.0}),  # no key asked for: k3 still 0.993
    ("sqrt_d_softens", {"temperature": 3.0, "scale": False}),  # divided by 3, not √4
    ("sqrt_d_softens", {"temperature": 2.0, "scale": False}),  # divided by 2, by the temperature
    ("sqrt_d_softens", {"temperature": 2.0, "scale": True}),  # divided by 4
    # "the three leaders drop to …" (k1, k2, k4): asking for k3 makes k3 the leader (0.52), yet the
    # leaders' weights stayed under 0.3; the zero query ties every key
    ("hot_flattens", {"q1": 3.0, "q2": 1.0, "q3": 2.5, "q4": 2.0}),
    ("hot_flattens", {"q1": 0.0, "q2": 0.0, "q3": 0.0, "q4": 0.0}),
])
def test_lookup_steps_claims_need_what_their_answers_name(claim, changes):
    step = next(s for s in load_steps("lookup") if s.claim == claim)
    settings = step_settings(LOOKUP, None, step.settings)
    assert LOOKUP_CLAIMS[claim].holds(runtime.shown(LOOKUP, settings)), "at the step's own settings it holds"
    assert not LOOKUP_CLAIMS[claim].holds(runtime.shown(LOOKUP, dataclasses.replace(settings, **changes)))


def test_attention_slower_at_some_lengths_is_not_never_slower():
    times = [Timing(layer, T, 64, seconds, 5) for layer, T, seconds in
             (("attention", 8, 2.0), ("rnn", 8, 1.0), ("attention", 16, 1.0), ("rnn", 16, 3.0))]
    assert slower_from(times, "attention", "rnn") is None  # not from one length on ...
    assert slower_at(times, "attention", "rnn") == (8,)  # ... yet slower at T = 8: the page says so


def test_positions_names_the_models_whose_shown_cross_attention_runs_along_the_anti_diagonal():
    """The caption said every correct model's cross-attention runs along the anti-diagonal; at layer 1 the
    sinusoidal and learned models' largest weights sit on one key (1 of 7 rows on the anti-diagonal)."""
    settings = POSITION_MODELS.settings()
    assert facts.anti_diagonal(runtime.shown(POSITION_MODELS, settings).view) == (
        ["sinusoidal", "learned", "rope", "t5"], [])
    along, off = facts.anti_diagonal(runtime.shown(POSITION_MODELS, dataclasses.replace(settings, layer=1)).view)
    assert off == ["sinusoidal", "learned"] and along == ["rope", "t5"]
    view = runtime.shown(POSITION_MODELS, dataclasses.replace(settings, layer=1)).view
    panel = view.panels[list(view.runs).index("sinusoidal")]
    n = panel.shape[1]
    assert (panel[:n].argmax(axis=1) == range(n - 1, -1, -1)).mean() < 0.5  # what "off" rests on
    assert facts.anti_diagonal(runtime.shown(POSITION_MODELS, dataclasses.replace(settings, block="encoder")).view) \
        == ([], [])


@pytest.mark.parametrize("buckets", [8, 16, 32, 64])
@pytest.mark.parametrize("both", [True, False])
@pytest.mark.parametrize("distance", [8, 16, 32, 128])
def test_t5_says_buckets_widen_only_where_farther_offsets_share_one(buckets, both, distance):
    """The T5 text said farther offsets share widening buckets at every setting; with 32 buckets both ways
    and a maximum distance of 16, each offset below it has a bucket of its own.  Checked on the whole
    bidirectional bucket matrix: the offsets looking back, below the maximum distance used."""
    settings = dataclasses.replace(POSITION_RELATIVE.settings(), scheme="T5", t5_buckets=buckets, t5_bidirectional=both,
                                   t5_max_distance=distance)
    view = runtime.shown(POSITION_RELATIVE, settings).view
    reach = view.t5_max_distance
    matrix = t5_relative_buckets(reach, reach, bidirectional=both, num_buckets=buckets, max_distance=reach)
    back = {int(matrix[q, q - d]) for q in range(reach) for d in range(q + 1)}  # bucket of offsets −d
    offsets_back = reach  # distances 0 … reach − 1
    assert facts.t5_shares(view) == (len(back) < offsets_back)


@pytest.mark.parametrize("seed", range(40))
def test_decoder_mixed_timing_has_a_length_measured_the_other_way_before_the_crossover(seed):
    """'timing: mixed' says the cache was faster at the step's length, yet some length between it and the
    crossover measured the other way (it said 'close to where the cache starts to pay' and 'about the same
    size', which one noisy length contradicts).  Random sweeps, every length."""
    rng = np.random.default_rng(seed)
    lengths = np.array([4, 8, 16, 32, 64, 128, 256])
    sweep = CacheSweep(32, 2, 4, lengths, rng.uniform(1, 2, 7), rng.uniform(1, 2, 7), 3)
    for length in range(2, 300, 7):
        name, values = timing_claim(sweep, length)
        if name != "timing: mixed":
            continue
        i = list(lengths).index(values["measured"])
        assert sweep.cached[i] < sweep.uncached[i]
        between = [j for j, n in enumerate(lengths) if values["measured"] <= n < values["crossover"]]
        assert any(sweep.cached[j] >= sweep.uncached[j] for j in between), (length, values)


def test_positions_order_visible_is_about_the_model_shuffled_and_the_letters_given():
    """"In the table of section 4 this model reverses A B C D E F G correctly": the claim checked the
    sinusoidal model whichever was shuffled (ALiBi's answers G F D E F C B A), and the letters were typed."""
    step = next(s for s in load_steps("positions") if s.claim == "order_visible")
    claim = POSITION_MODELS.claims["order_visible"]

    def at(**link):
        return runtime.shown(POSITION_MODELS, step_settings(POSITIONS, POSITION_MODELS, {**step.settings, **link}))

    assert claim.holds(at())
    alibi = at(shuffle_encoding="alibi")
    assert not alibi.view.runs["alibi"].correct and not claim.holds(alibi)
    hello = at(shuffle_input="H E L L O")
    assert claim.holds(hello)
    assert "this model reverses H E L L O correctly" in say(POSITION_MODELS.claims, "order_visible", step.reveal, hello)


@pytest.mark.parametrize("layers", [1, 2, 6])
def test_cost_parameters_step_counts_one_layer_as_its_sentence_says(layers):
    """"No: N at any T (Q, K, V and output projections, d² + d each)": shown only where N is that."""
    step = next(s for s in load_steps("cost") if s.claim == "parameters_fixed")
    shown = runtime.shown(COST, step_settings(COST, None, {**step.settings, "layers": layers}))
    d = shown.settings.d
    holds = COST.claims["parameters_fixed"].holds(shown)
    assert holds is (layers == 1)
    if holds:
        from explorer.lessons.cost.numbers import count_text  # the figure's notation: "16.6 k" at d = 64

        assert f"No: {count_text(4 * (d * d + d))} at any T (" in say(COST.claims, "parameters_fixed", step.reveal,
                                                                       shown)


@pytest.mark.parametrize("t", [1, 2, 11])
def test_decoder_cache_answer_says_again_only_past_the_first_step(t):
    """"without (both decoder layers on all one positions)" at step 1."""
    step = next(s for s in load_steps("decoder") if s.claim == "cache_saves")
    shown = runtime.shown(DECODER_CACHE, step_settings(DECODER, DECODER_CACHE, {**step.settings, "t": t}))
    holds = DECODER_CACHE.claims["cache_saves"].holds(shown)
    assert holds is (t > 1)
    if holds:
        assert "all one positions" not in say(DECODER_CACHE.claims, "cache_saves", step.reveal, shown)


@pytest.mark.parametrize("T", [512, 4096, 8192, 131072])
def test_length_kv_cache_answer_only_at_a_length_both_models_read(T):
    """The 7B step's cache sizes are caches the two models hold: Llama-2-7B reads 4,096 positions."""
    step = next(s for s in load_steps("length") if s.claim == "cache_formula")
    shown = runtime.shown(LENGTH_MEMORY, step_settings(LENGTH, LENGTH_MEMORY, {**step.settings, "mem_T": T}))
    assert LENGTH_MEMORY.claims["cache_formula"].holds(shown) is (T <= 4096)
