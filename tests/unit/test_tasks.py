"""The toy tasks produce what they claim, deterministically."""

import math

import pytest
import torch

from explorer.training.tasks import (
    AGENT_ADJECTIVES,
    ANIMATES,
    PLACE_ADJECTIVES,
    PLACES,
    QUARRY_ADJECTIVES,
    RecallTask,
    get_task,
)


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def visible(task, ids, valid):
    return task.decode(ids[valid])


def test_reverse_and_sort_targets_are_the_reversed_and_sorted_source():
    for name, answer in (("reverse", lambda s: s[::-1]), ("sort", sorted)):
        task = get_task(name)
        batch = task.batch(50, gen())
        for i in range(50):
            source = visible(task, batch.inputs[i], batch.valid[i])
            assert 2 <= len(source) <= 10
            scored = batch.targets[i][batch.targets[i] != -100]
            assert task.decode(scored) == [*answer(source), "</s>"]
            decoder_in = visible(task, batch.decoder_inputs[i], batch.decoder_valid[i])
            assert decoder_in == ["<s>", *answer(source)]  # teacher forcing: the answer shifted right


def test_induction_second_half_repeats_the_first_and_only_the_repeat_is_scored():
    task = get_task("induction")
    batch = task.batch(40, gen())
    for i in range(40):
        tokens = visible(task, batch.inputs[i], batch.valid[i])
        half = len(tokens) // 2
        assert tokens[:half] == tokens[half:] and len(set(tokens[:half])) == half
        scored = [j for j, t in enumerate(batch.targets[i]) if t != -100]
        assert scored == list(range(half, 2 * half - 1))
        assert all(task.vocab[int(batch.targets[i][j])] == tokens[j + 1] for j in scored)


def test_coreference_target_is_the_noun_the_adjective_describes():
    task = get_task("coreference")
    batch = task.batch(400, gen())
    two_animals = 0
    for i in range(400):
        tokens = task.decode(batch.inputs[i])
        it = tokens.index("it")
        scored = [j for j, t in enumerate(batch.targets[i]) if t != -100]
        assert scored == [it] == [task.it_position]
        answer = task.vocab[int(batch.targets[i][it])]
        subject, obj = [t for t in tokens if t in ANIMATES or t in PLACES]
        assert subject in ANIMATES and subject != obj
        adjective = tokens[-1]
        if adjective in AGENT_ADJECTIVES:
            assert answer == subject
        else:
            assert answer == obj
            assert adjective in (PLACE_ADJECTIVES if obj in PLACES else QUARRY_ADJECTIVES)
        assert task.referent(tokens) == answer
        assert tokens[int(task.referent_positions(batch)[i])] == answer
        two_animals += obj in ANIMATES
    # Half the sentences pair two animals: the noun's kind cannot give the answer away.
    assert 150 < two_animals < 250


def test_coreference_referent_is_none_outside_the_task_grammar():
    task = get_task("coreference")
    words = str.split  # a sentence as the task's tokens
    assert task.referent(words("the street didn't cross the animal because it was too tired")) is None
    assert task.referent(words("the dog didn't catch the cat because it was too wide")) is None
    assert task.referent(words("the dog was tired")) is None
    assert task.referent(words("the dog didn't catch the cat because it was too fast")) == "cat"


def test_recall_target_is_the_first_token_at_the_question_mark():
    task = get_task("recall")
    generator = gen()
    for _ in range(20):
        batch = task.batch(16, generator)
        assert batch.inputs.shape[1] == int(batch.distance.max()) + 1, "a batch is as long as its longest gap"
        for i in range(16):
            d = int(batch.distance[i])
            tokens = visible(task, batch.inputs[i], batch.valid[i])
            assert len(tokens) == d + 1 and tokens[-1] == "?"
            assert all(t in task.keys for t in tokens[:-1]), "distractors are letters like the key"
            assert task.vocab[int(batch.targets[i][d])] == tokens[0]
            assert (batch.targets[i] != -100).sum() == 1


def test_recall_training_gaps_are_short_and_geometric():
    """Geometric: P(d) = (2/3)(1/3)^(d − 1), so P(d = 1) = 2/3, P(d ≤ 3) = 26/27, mean 1.5."""
    task = get_task("recall")
    assert task.max_distance == 256 and task.gaps == "geometric"
    gaps = task.batch(20000, gen(3)).distance
    assert gaps.min() == 1 and gaps.max() <= 14
    assert abs((gaps == 1).float().mean() - 2 / 3) < 0.01
    assert abs((gaps <= 3).float().mean() - 26 / 27) < 0.005
    assert abs(gaps.float().mean() - 1.5) < 0.02


def test_recall_log_uniform_gaps_are_mostly_short_and_reach_the_longest():
    """Log-uniform: the longest gap of a batch has log L uniform, its gaps are uniform up to L."""
    task = RecallTask(max_distance=128, gaps="log-uniform")
    generator = gen(3)
    batches = [task.batch(64, generator).distance for _ in range(2000)]
    longest = torch.tensor([int(d.max()) for d in batches])
    gaps = torch.cat(batches)
    assert gaps.min() == 1 and task.max_distance - 8 <= gaps.max() <= task.max_distance
    # P(L ≤ 8) = P(int(129^u) ≤ 8) = log 9 / log 129 ≈ 0.45; P(L > 64) = 1 − log 65 / log 129 ≈ 0.14.
    assert abs((longest <= 8).float().mean() - math.log(9) / math.log(129)) < 0.04
    assert abs((longest > 64).float().mean() - (1 - math.log(65) / math.log(129))) < 0.03
    assert 0.5 < (gaps <= 8).float().mean() < 0.7 and 0.02 < (gaps > 64).float().mean() < 0.07
    uniform = RecallTask(max_distance=128, gaps="uniform").batch(4000, gen(4)).distance
    assert abs(uniform.float().mean() - 64.5) < 2 and uniform.max() == 128
    with pytest.raises(ValueError, match="gap distribution"):
        RecallTask(gaps="poisson")


def test_recall_evaluation_holds_every_distance_equally_often():
    task = RecallTask(max_distance=40)
    batch = task.evaluation()
    counts = torch.bincount(batch.distance, minlength=41)[1:]
    assert counts.min() >= task.eval_size // 40 and counts.max() <= task.eval_size // 40 + 1
    assert batch.inputs.shape == (task.eval_size, 41)
    assert torch.equal(batch.inputs, task.evaluation().inputs)
    first = get_task("recall").evaluation()
    assert torch.equal(torch.bincount(first.distance)[1:], torch.full((256,), 1024 // 256))


def test_evaluation_sets_are_fixed_and_differ_from_training_batches():
    for name in ("reverse", "coreference", "recall"):
        task = get_task(name)
        first, second = task.evaluation(), task.evaluation()
        assert torch.equal(first.inputs, second.inputs)
        assert not torch.equal(first.inputs[:8], task.batch(8, gen(0)).inputs)


# --- what a task reads from user text, and the answer it expects ------------------------------------


def test_letter_tasks_read_spelled_words_and_report_the_rest():
    task = get_task("reverse")
    parsed = task.parse("HELLO x Q 😀 A")
    assert parsed.tokens == ("H", "E", "L", "L", "O", "A")
    assert parsed.unknown == ("x", "Q", "😀")
    assert "not in this model's vocabulary" in parsed.problems[0]


def test_input_beyond_the_models_length_is_cut_and_said():
    task = get_task("sort")
    parsed = task.parse("A B C D E F G H I J K L")
    assert len(parsed.tokens) == task.max_input_tokens == 10
    assert parsed.cut == 2 and "the last 2 tokens were left out" in parsed.problems[-1]


def test_coreference_ignores_case_and_punctuation():
    task = get_task("coreference")
    parsed = task.parse("The animal didn't cross the street, because it was too TIRED!")
    assert " ".join(parsed.tokens) == "the animal didn't cross the street because it was too tired"
    assert parsed.unknown == () and parsed.cut == 0


def test_padding_token_is_never_read_from_text():
    assert get_task("reverse").parse("<pad> A B").tokens == ("A", "B")


def test_expected_outputs():
    assert get_task("reverse").expected_output(["A", "B", "C"]) == ["C", "B", "A", "</s>"]
    assert get_task("sort").expected_output(["C", "A", "B"]) == ["A", "B", "C", "</s>"]
    coreference = get_task("coreference")
    tired = ["the", "animal", "didn't", "cross", "the", "street", "because", "it", "was", "too", "tired"]
    wide = ["the", "animal", "didn't", "cross", "the", "street", "because", "it", "was", "too", "wide"]
    assert coreference.expected_output(tired) == ["animal"]
    assert coreference.expected_output(wide) == ["street"]
    assert coreference.expected_output(["the", "animal"]) is None
    assert get_task("recall").expected_output(["C", "A", "F", "?"]) == ["C"]
    assert get_task("recall").expected_output(["C", "A", "F"]) is None
    assert get_task("induction").expected_output(["t1", "t2"]) is None


def test_coreference_grammar_accepts_what_it_generates_and_nothing_else():
    task = get_task("coreference")
    batch = task.evaluation()
    for row in batch.inputs[:200]:
        assert task.in_grammar(task.decode(row)), task.decode(row)
    tired = ["the", "animal", "didn't", "cross", "the", "street", "because", "it", "was", "too", "tired"]
    assert task.in_grammar(tired)
    assert not task.in_grammar(["the", "street", *tired[2:]])  # a place as the subject
    assert not task.in_grammar([*tired[:3], "chase", *tired[4:]])  # chasing a street
    assert not task.in_grammar([*tired[:-1], "fast"])  # an adjective for animals, about a street
    assert not task.in_grammar(tired[:6] + tired[7:])  # "because" missing
    assert task.expected_output(tired[:6] + tired[7:]) is None, "no answer expected outside the grammar"


def test_typed_markers_are_left_out_with_a_note():
    """'<s> </s> A B' was read as four source letters: the decoder wrote C, not in the input."""
    parsed = get_task("reverse").parse("<s> </s> A B <pad>")
    assert parsed.tokens == ("A", "B") and parsed.markers == ("<s>", "</s>", "<pad>")
    assert any("markers the model places itself" in p and "'<s>'" in p for p in parsed.problems)
