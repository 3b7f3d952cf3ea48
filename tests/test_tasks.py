"""The toy tasks produce what they claim, deterministically."""

import torch

from explorer.tasks import ANIMATE_ADJECTIVES, ANIMATES, PLACES, get_task


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
    batch = task.batch(200, gen())
    for i in range(200):
        tokens = task.decode(batch.inputs[i])
        it = tokens.index("it")
        scored = [j for j, t in enumerate(batch.targets[i]) if t != -100]
        assert scored == [it]
        answer = task.vocab[int(batch.targets[i][it])]
        nouns = [t for t in tokens if t in ANIMATES or t in PLACES]
        assert len(nouns) == 2 and answer in nouns
        assert (answer in ANIMATES) == (tokens[-1] in ANIMATE_ADJECTIVES)
    firsts = {task.decode(batch.inputs[i])[1] in PLACES for i in range(200)}
    assert firsts == {True, False}, "both noun orders must occur, so 'first noun' is never the rule"


def test_recall_target_is_the_first_token_at_the_question_mark():
    task = get_task("recall")
    batch = task.batch(100, gen())
    for i in range(100):
        d = int(batch.distance[i])
        tokens = visible(task, batch.inputs[i], batch.valid[i])
        assert len(tokens) == d + 1 and tokens[-1] == "?"
        assert all(t in task.keys for t in tokens[:-1]), "distractors are letters like the key"
        assert task.vocab[int(batch.targets[i][d])] == tokens[0]
        assert (batch.targets[i] != -100).sum() == 1
    assert int(batch.distance.max()) > 48


def test_evaluation_sets_are_fixed_and_differ_from_training_batches():
    for name in ("reverse", "coreference", "recall"):
        task = get_task(name)
        first, second = task.evaluation(), task.evaluation()
        assert torch.equal(first.inputs, second.inputs)
        assert not torch.equal(first.inputs[:8], task.batch(8, gen(0)).inputs)
