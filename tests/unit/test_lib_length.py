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
    trained_lengths,
)
from explorer.model.positional import sinusoidal_encoding
from explorer.training.pretrained import MODEL_SPECS, load_model

pytestmark = pytest.mark.usefixtures("one_thread")  # small models: one thread is faster, as in the app

NAMES = sorted(REVERSAL_MODELS.values())


def test_every_shipped_reversal_encoding_is_covered():
    shipped = {spec.encoding for spec in MODEL_SPECS if spec.task == "reverse" and spec.n_heads == 4
               and spec.n_layers == 2}
    assert set(REVERSAL_MODELS) == shipped and len(shipped) >= 6


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
