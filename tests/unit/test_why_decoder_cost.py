"""Issue #59 for the decoder and cost lessons: each explanation the lessons give, checked against an
independent reference (a closed form, torch's FLOP counter, a parallel forward pass of the real model)."""

import torch
from torch.utils.flop_counter import FlopCounterMode

from explorer.analysis.cost import cache_setup_cost
from explorer.lessons.decoder.models import DECODER_MODELS, step_counts
from explorer.training.pretrained import load_model


def _multiplications(fn) -> int:
    """Multiply-adds of the matrix products run by fn (torch's FLOP counter reports 2 each)."""
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        fn()
    return counter.get_total_flops() // 2


# --- decoder: what the KV cache saves (the encoder runs once, with the cache or without) ---------------


def test_uncached_step_runs_the_decoder_again_not_the_encoder():
    """Reversing J A B B E D C O D E, step 11 (11 decoder positions, 10 source letters): without the
    cache the decoder runs again on all 11 positions over the encoder output computed once; the encoder
    is no part of the step.  Closed form per layer: self-attention 4·T·d² + 2·T²·d, cross-attention
    2·T·d² + 2·T_src·d² + 2·T·T_src·d, feed-forward 2·T·d·d_ff; then T·d·vocab logits."""
    model = load_model(DECODER_MODELS["reverse"]).model
    c = model.config
    d, n, vocab, d_ff, T, T_src = c.d_model, c.n_layers, c.output_vocab_size, c.ff_dim, 11, 10
    per_layer = (4 * T * d * d + 2 * T * T * d) + (2 * T * d * d + 2 * T_src * d * d + 2 * T * T_src * d) \
        + 2 * T * d * d_ff
    closed = n * per_layer + T * d * vocab
    counts = step_counts("reverse", T_src, T)
    assert counts.uncached[T - 1] == closed == 1_497_920
    # torch's own count of the decoder re-run over a kept encoder output
    source, prefix = torch.randint(3, vocab, (1, T_src)), torch.randint(3, vocab, (1, T))
    memory = model.encoder(source, causal=False)[0]
    assert _multiplications(lambda: model.lm_head(model.decoder(prefix, causal=True, memory=memory)[0])) == closed
    encoder = _multiplications(lambda: model.encoder(source, causal=False))
    assert counts.encoder == encoder == cache_setup_cost(d, n, T_src, c.d_ff).encoder == 1_008_640
    # the saving at this step: 12.35×, not the 20.7× of an uncached count that re-ran the encoder
    ratio = counts.uncached[T - 1] / counts.cached[T - 1]
    assert round(ratio, 2) == 12.35 and round((counts.uncached[T - 1] + encoder) / counts.cached[T - 1]) == 21
    # whole output: the encoder once both ways, the cache's cross-attention keys and values once
    assert counts.uncached_total == encoder + sum(counts.uncached)
    assert counts.cached_total == encoder + n * 2 * T_src * d * d + sum(counts.cached)


# --- cost: the self-attention row's label -------------------------------------------------------------

TERMS = {"O(T²·d)": lambda T, d: T * T * d, "O(T·d² + T²·d)": lambda T, d: T * d * d + T * T * d,
         "O(T·d²)": lambda T, d: T * d * d}


def test_attention_row_label_bounds_its_count_at_every_size():
    """The row's big-O must bound the multiplications its count has (4·T·d² + 2·T²·d) above and below by
    constants at every size the page reaches; O(T²·d) does not (at T = 16, d = 512 the count is 65 times
    T²·d, 98 % of it in the Q, K, V and output projections)."""
    from explorer.analysis.cost import attention_cost
    from explorer.lessons.cost.counts import BIG_O, complexity_rows
    from explorer.lessons.cost.view import WIDTHS

    label = BIG_O["attention"][1]
    assert label == "O(T·d² + T²·d)"
    ratios = [attention_cost(T, d).multiplications / TERMS[label](T, d) for T in (2, 16, 64, 512, 4096) for d in WIDTHS]
    assert min(ratios) >= 2 and max(ratios) <= 4
    row = next(r for r in complexity_rows(16, 512) if r.layer == "attention")
    assert row.big_o[1] == label and row.cost.multiplications == 4 * 16 * 512**2 + 2 * 16**2 * 512
    assert round(4 * 16 * 512**2 / row.cost.multiplications, 2) == 0.98


def test_the_measured_box_states_the_work_with_its_projections():
    from explorer.lessons.cost.boxes import attention_parameters

    finding = attention_parameters(64).finding
    assert "the work, O(T·d² + T²·d)" in finding and "O(T²·d), not" not in finding


def test_the_chart_names_the_term_it_draws():
    from explorer.lessons.cost.counts import operations_curves

    curves = operations_curves(8, [4])
    assert curves["T²·d (attention's scores and mix)"] == [4 * 4 * 8] and "T²·d (attention's term)" not in curves


# --- decoder: why teacher forcing is used (one parallel pass), and what it does not do ---------------

def _parallel_losses_by_hand(task_name, letters, teacher_tokens):
    """Training's pass, built here: the real model called once on the source and the shifted target."""
    from explorer.training.tasks import BOS

    loaded = load_model(DECODER_MODELS[task_name])
    task, model = loaded.task, loaded.model
    source, right = task.encode(letters), task.encode(teacher_tokens)
    with torch.no_grad():
        logits, _ = model(torch.tensor([source]), torch.tensor([[task.index[BOS], *right[:-1]]]))
    log_p = torch.log_softmax(logits[0].double(), -1)
    return -log_p[torch.arange(len(right)), torch.tensor(right)].numpy()


def test_one_parallel_pass_gives_every_teacher_forced_loss():
    """The forcing section's sentence: one forward pass over the shifted target gives every position's
    loss, equal to the step-by-step teacher-forced losses (each step run alone with the KV cache)."""
    import numpy as np

    from explorer.lessons.decoder.view import DecoderSettings, decoder_view, parallel_claim

    view = decoder_view(DecoderSettings(task="sort", input_sort="P E A C H", mistake="2"))
    by_hand = _parallel_losses_by_hand("sort", list("PEACH"), [*"ACEHP", "</s>"])
    np.testing.assert_allclose(view.parallel, by_hand, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(view.forced.losses, by_hand, rtol=1e-3, atol=1e-6)  # computed one step at a time
    claim = parallel_claim(view)
    assert claim["n"] == 6 and claim["read"] == "<s> A C E H P"
    diff = float(np.max(np.abs(view.parallel - view.forced.losses)))
    mantissa, exponent = f"{diff:.0e}".split("e")
    superscript = "".join(dict(zip("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹", strict=True))[c] for c in str(int(exponent)))
    assert diff < 1e-4 and claim["diff"] == f"{mantissa} × 10{superscript}"
    # induction: the prompt, then the answer without its last token
    view = decoder_view(DecoderSettings(task="induction", input_induction="t3 t7 t1 t9 t4 t3"))
    assert parallel_claim(view)["read"] == "t3 t7 t1 t9 t4 t3 t7 t1 t9"


def test_the_forcing_section_gives_the_real_reason_and_names_exposure_bias():
    from explorer.kit.prose import lesson_text
    from explorer.kit.steps import load_steps

    intro = " ".join(lesson_text("decoder", "forcing: intro").split())
    assert "one parallel pass that gives every position's loss at once" in intro and "Williams & Zipser" in intro
    notes = " ".join(lesson_text("decoder", "forcing: not the notes' reason").split())
    assert "The lecture notes say teacher forcing is used so that an error" in notes
    assert "At inference there is none" in notes and "**exposure bias** (Ranzato et al., 2016" in notes
    step = next(s for s in load_steps("decoder") if s.title == "One mistake, two ways of reading")
    assert "only training has a teacher" in step.reveal and "(exposure bias)" in step.reveal


def test_reversing_can_go_by_position_and_sorting_cannot():
    """Step 3's reason, as a fact about the tasks: the k-th letter a reversal writes is the k-th from
    the end of every input, whatever its letters; no position map does that for sorting."""
    from explorer.kit.steps import load_steps
    from explorer.lessons.decoder.models import PRESETS
    from explorer.training.tasks import get_task

    for text in PRESETS["reverse"]:
        tokens = text.split()
        assert get_task("reverse").expected_output(tokens)[:-1] == tokens[::-1]  # position n − 1 − k, always
    first = set()
    for text in PRESETS["sort"]:
        tokens = text.split()
        first.add(tokens.index(get_task("sort").expected_output(tokens)[0]))  # where the first letter out sits
    assert len(first) > 1, "sorting's first letter comes from different positions"
    step = next(s for s in load_steps("decoder") if s.title == "Sorting reads by content")
    assert "Reversing can go by position alone" in step.reveal and "Reversing looks at a position" not in step.reveal


def test_the_decoder_prose_says_what_training_and_the_architectures_do():
    """'Training sums the teacher-forced line': the shipped models were trained on the mean
    (F.cross_entropy's default reduction, explorer/training/train.py). 'A decoder can do what an
    encoder–decoder does': it can be trained on the same pairs; at equal parameters T5's shared
    encoder–decoder did better than its decoder-only prefix LM (Raffel et al., 2020, table 2)."""
    import inspect

    from explorer.kit.prose import lesson_text
    from explorer.training import train

    assert "reduction" not in inspect.getsource(train._optimise)  # cross_entropy's default: the mean
    loss = " ".join(lesson_text("decoder", "forcing: loss").split())
    assert "Training sums" not in loss and "mean of these losses over every position of a batch" in loss
    half = " ".join(lesson_text("decoder", "architectures: half", n_layers=2, decoder=1, both=2, share=0.5,
                                layer_share=0.4, per_decoder=12, per_both=28, decoder_embed=1, both_embed=2,
                                deep_share=0.9, shared=1, paper="").split())
    assert "can do what an encoder–decoder does" not in half and "Raffel et al., 2020" in half


def test_cost_steps_and_the_parameters_box_say_what_is_counted():
    """Step 7: N stacked loops take T + N − 1 steps because each layer *can* start after the one
    below's first output (the dependency depth; torch's nn.RNN runs layer after layer). The box's
    notes line is what one version of the notes says (seed 001: T times an RNN's parameters)."""
    from explorer.kit.steps import load_steps
    from explorer.lessons.cost.boxes import attention_parameters
    from explorer.lessons.cost.counts import stack_cost

    step = next(s for s in load_steps("cost") if s.title == "A stack of six")
    assert "can start as soon as" in step.reveal and "each layer starts as soon" not in step.reveal
    assert stack_cost("rnn", 512, 64, 3, 6).sequential_steps == 512 + 6 - 1
    notes = attention_parameters(64).notes_say
    assert "T times an RNN's parameters, O(T·d²)" in notes and "sometimes written" not in notes
