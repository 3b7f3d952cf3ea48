"""explorer.analysis.length: the shipped reversal models past their trained length, scored as their cards are."""

import pytest
import torch

from explorer.analysis import length
from explorer.analysis.length import (
    LONGEST,
    REVERSAL_MODELS,
    accuracy_by_length,
    longest_length,
    sequences_right,
    stretched_model,
    t5_buckets_met,
    trained_lengths,
)
from explorer.model.building import seeded
from explorer.model.positional import ENCODINGS, sinusoidal_encoding
from explorer.training.pretrained import MODEL_SPECS, build_model, find_spec, load_model
from explorer.training.train import _learning_rate

NAMES = sorted(REVERSAL_MODELS.values())


def test_every_shipped_reversal_encoding_is_covered():
    shipped = {spec.encoding for spec in MODEL_SPECS if spec.task == "reverse" and spec.n_heads == 4
               and spec.n_layers == 2}
    assert set(REVERSAL_MODELS) == shipped == set(ENCODINGS)  # every encoding the model supports, T5 too


@pytest.mark.parametrize("name", NAMES)
def test_the_cards_accuracy_is_reproduced_length_by_length(name):
    """The card's held-out set, split by input length, scored one length at a time (no padding), by
    the shipped model and by the one with longer tables: together exactly the card's accuracy."""
    loaded = load_model(name)
    batch = loaded.task.evaluation()
    lengths = batch.valid.sum(dim=1)
    right = {"shipped": 0, "stretched": 0}
    for n in lengths.unique().tolist():
        source = batch.inputs[lengths == n, :n]
        shipped = sequences_right(loaded.model, loaded.task, source)
        assert torch.equal(sequences_right(stretched_model(name), loaded.task, source), shipped)
        right["shipped"] += shipped.sum().item()
    assert right["shipped"] / len(batch.inputs) == pytest.approx(loaded.card["heldout"]["accuracy"], abs=1e-6)
    assert trained_lengths(name) == (lengths.min().item(), lengths.max().item()) == (2, 10)


@pytest.mark.parametrize("name", NAMES)
def test_accuracy_by_length_in_the_trained_range_agrees_with_the_card(name):
    """Fresh inputs, 100 per length 2–10 (the held-out set draws its lengths uniformly from 2–10):
    the mean is the card's accuracy up to sampling error (4 standard errors of 900 draws, at least 0.02)."""
    card = load_model(name).card["heldout"]["accuracy"]
    low, high = trained_lengths(name)
    by_length = accuracy_by_length(name, range(low, high + 1))
    mean = sum(by_length.values()) / len(by_length)
    assert abs(mean - card) <= max(0.02, 4 * (card * (1 - card) / 900) ** 0.5)


def test_sequences_right_against_decoding_by_hand():
    loaded = load_model("reverse-sinusoidal-h4-l2")
    task = loaded.task
    words = ["HELLO", "ABCDEFGHIJ", "PO", "AAAB", "ABCDEFGHIJKL"]  # the last is longer than training
    model = stretched_model(loaded.name)
    for word in words:
        source = torch.tensor([task.encode(list(word))])
        generated, _ = model.generate(source, len(word) + 1, task.index["<s>"], cache=False)
        by_hand = task.decode(generated[0]) == task.expected_output(list(word))
        assert sequences_right(model, task, source).tolist() == [by_hand]


def test_the_learned_table_refuses_positions_it_has_no_row_for():
    name = REVERSAL_MODELS["learned"]
    rows = load_model(name).model.config.max_len
    assert longest_length(name) == rows - 1
    assert set(accuracy_by_length(name, [rows - 1])) == {rows - 1}
    with pytest.raises(ValueError, match=rf"position {rows}\b.*has {rows} rows"):
        accuracy_by_length(name, [4, rows, rows + 5])


def test_fixed_tables_are_made_longer_with_the_same_weights():
    name = REVERSAL_MODELS["sinusoidal"]
    shipped, stretched = load_model(name).model, stretched_model(name)
    assert stretched.config.max_len == LONGEST + 1 and longest_length(name) == LONGEST
    table = stretched.encoder.position.table.double().numpy()
    assert abs(table - sinusoidal_encoding(LONGEST + 1, 64)).max() < 1e-6
    for (key, ours), theirs in zip(stretched.state_dict().items(), shipped.state_dict().values(), strict=True):
        assert ours.data_ptr() == theirs.data_ptr(), key  # the shipped tensors themselves


def test_inputs_are_drawn_without_the_global_generator_and_always_the_same():
    name = REVERSAL_MODELS["alibi"]
    state = torch.get_rng_state()
    first = accuracy_by_length(name, [3, 13], samples=37)
    assert torch.equal(torch.get_rng_state(), state)
    length._accuracy.cache_clear()
    torch.manual_seed(99)
    assert accuracy_by_length(name, [13, 3], samples=37) == first
    assert all(v * 37 == round(v * 37) for v in first.values())  # a share of 37 inputs


@pytest.mark.parametrize("args,problem", [
    (("reverse-learned-h4-l2", [0]), "between 1 and"),
    (("reverse-rope-h4-l2", [LONGEST + 1]), "between 1 and"),
    (("sort-sinusoidal-h4-l2", [4]), "not a shipped reversal model"),
    (("reverse-rope-h4-l2", [4], 0), "samples"),
])
def test_bad_requests_are_refused(args, problem):
    with pytest.raises(ValueError, match=problem):
        accuracy_by_length(*args)


def test_t5_runs_at_every_length_with_the_shipped_tensors():
    name = REVERSAL_MODELS["t5"]
    shipped, stretched = load_model(name).model, stretched_model(name)
    assert longest_length(name) == LONGEST and stretched.config.max_len == LONGEST + 1
    for (key, ours), theirs in zip(stretched.state_dict().items(), shipped.state_dict().values(), strict=True):
        assert ours.data_ptr() == theirs.data_ptr(), key
    got = accuracy_by_length(name, [10, 11, 20, LONGEST], samples=20)
    assert set(got) == {10, 11, 20, LONGEST} and all(0 <= v <= 1 for v in got.values())


def test_t5_buckets_past_the_band_were_never_trained():
    """The buckets t5_buckets_met calls untrained are looked up by no input of 2–10 letters, so training
    never moved them: they are the seeded initial values times AdamW's weight decay, step by step
    (the decay multiplies every weight by 1 − lr · 0.01, and a zero gradient adds nothing)."""
    name = REVERSAL_MODELS["t5"]
    spec = find_spec(name)
    loaded = load_model(name)
    with seeded(spec.seed):
        initial = build_model("transformer", loaded.task, loaded.card["config"])
    decay = 1.0
    for step in range(spec.steps):
        decay *= 1 - _learning_rate(step, spec.steps, spec.learning_rate) * 0.01
    assert trained_lengths(name) == (2, 10)
    for n in range(2, 11):  # inside the band every bucket met was trained
        assert all(not met.untrained for met in t5_buckets_met(name, n).values())
    met = t5_buckets_met(name, 30)
    assert met["encoder"].longest_offset == 29 and met["decoder"].longest_offset == 30
    assert met["encoder"].untrained and met["decoder"].untrained
    for stack, m in met.items():
        table = getattr(loaded.model, stack).t5_bias.bias.weight.double()
        start = getattr(initial, stack).t5_bias.bias.weight.double()
        assert set(m.untrained) <= set(m.buckets) and m.table_size == len(table)
        for bucket in m.untrained:
            torch.testing.assert_close(table[bucket], start[bucket] * decay, rtol=1e-4, atol=1e-6)
        trained = sorted(set(t5_buckets_met(name, 10)[stack].buckets))
        assert all((table[b] - start[b] * decay).abs().max() > 1e-3 for b in trained), stack
    # Offsets by hand: the encoder's bidirectional table gives offsets 0–7 a bucket each and shares
    # the next ones logarithmically (8–11 one bucket, 12–15 the next); inputs of 2–10 letters have
    # offsets up to 9, so a 12-letter input (offset 11) meets nothing new and a 13-letter one does.
    assert not t5_buckets_met(name, 12)["encoder"].untrained and t5_buckets_met(name, 13)["encoder"].untrained
    # The decoder looks back only, 16 buckets exact: trained up to offset 10, so 11 letters meet offset 11.
    assert t5_buckets_met(name, 11)["decoder"].untrained == (11,)
    with pytest.raises(ValueError, match="no T5 bias table"):
        t5_buckets_met(REVERSAL_MODELS["rope"], 12)
