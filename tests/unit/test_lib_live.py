"""explorer.training.live (train_live, the race) and explorer.model.seq2seq (the recurrent baseline).

The accuracy test trains the defaults to the end (800 steps: the slowest test here); it checks the
defaults' accuracy, never the time they take."""

import itertools

import numpy as np
import pytest
import torch

from explorer import train_live
from explorer.model.building import seeded
from explorer.model.seq2seq import RecurrentSeq2Seq
from explorer.model.transformer import TransformerConfig
from explorer.training.live import (
    MAX_SNAPSHOTS,
    MAX_STEPS,
    LiveSettings,
    build,
    live_task,
    matched_hidden_size,
    probe,
    race,
    race_settings,
    run_settings,
)


def same(a, b) -> bool:
    """Two snapshot sequences with identical numbers (timings aside)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if (x.step, x.loss, x.accuracy) != (y.step, y.loss, y.accuracy):
            return False
        if (x.attention is None) != (y.attention is None):
            return False
        if x.attention is not None and not np.array_equal(x.attention, y.attention):
            return False
    return True


def test_the_defaults_reach_90_percent_on_the_reversal():
    snapshots = list(train_live("reverse"))
    settings = LiveSettings()
    assert [s.step for s in snapshots][:2] == [0, settings.every] and snapshots[-1].step == settings.steps == 800
    assert max(np.diff([s.step for s in snapshots])) <= 100, "a snapshot at least every 100 steps"
    assert snapshots[0].accuracy < 0.05
    assert snapshots[-1].accuracy >= 0.9, [round(s.accuracy, 3) for s in snapshots]
    assert snapshots[-1].loss < snapshots[0].loss / 10
    # The anti-diagonal formed in the last layer: answer position i ↔ source position n−1−i (the
    # query <s> predicts the first answer letter, the last source letter).  At step 0 every cell of
    # that diagonal has about 1/n of the weight; at the end some head puts well over twice that there.
    def on_diagonal(attention):  # (layers, heads): the mean weight on the anti-diagonal cells
        n = attention.shape[-1]
        return attention[:, :, np.arange(n), np.arange(n)[::-1]].mean(-1)

    n = snapshots[0].attention.shape[-1]
    assert on_diagonal(snapshots[0].attention).max() < 1.5 / n
    assert on_diagonal(snapshots[-1].attention)[-1].max() > 2.4 / n


def test_same_seed_same_snapshots_other_seed_other_run():
    first = list(train_live("reverse", steps=30, snapshot_every=10, seed=3))
    again = list(train_live("reverse", steps=30, snapshot_every=10, seed=3))
    other = list(train_live("reverse", steps=30, snapshot_every=10, seed=4))
    assert [s.step for s in first] == [0, 10, 20, 30]
    assert same(first, again)
    assert not same(first, other)
    gru = list(train_live("reverse", model="gru", steps=30, snapshot_every=10, seed=3))
    assert same(gru, list(train_live("reverse", model="gru", steps=30, snapshot_every=10, seed=3)))
    assert all(s.attention is None for s in gru)


@pytest.mark.parametrize(("task", "kind"), [("reverse", "cross"), ("sort", "cross"), ("induction", "self"),
                                            ("coreference", "self")])
def test_attention_is_the_probes_cross_or_self_attention(task, kind):
    snapshot = next(train_live(task, n_heads=4, n_layers=3))
    batch, queries, keys = probe(live_task(task))
    attention = snapshot.attention
    assert attention.shape == (3, 4, len(queries), len(keys))
    assert not attention.flags.writeable
    np.testing.assert_allclose(attention.sum(-1), 1, atol=1e-5)
    # The same numbers as the model's own trace for the probe.
    model = build(LiveSettings(task=task, n_heads=4, n_layers=3), live_task(task)).eval()
    with torch.no_grad():
        if kind == "cross":
            _, trace = model(batch.inputs, batch.decoder_inputs)
            expected = [layer.cross_attention.weights[0] for layer in trace.decoder_layers]
        else:
            _, trace = model(batch.inputs)
            expected = [layer.self_attention.weights[0] for layer in trace.layers]
    np.testing.assert_allclose(attention, torch.stack(expected).numpy(), atol=1e-6)
    if task == "induction":  # a decoder: nothing above the diagonal
        assert np.all(np.triu(attention, k=1) == 0)


def test_reversal_probe_is_the_reversed_answer():
    batch, queries, keys = probe(live_task("reverse"))
    assert keys == list("BEADFC") and queries == ["<s>", *"CFDAEB"]
    assert batch.targets.shape == batch.decoder_inputs.shape == (1, 7)


def test_shortest_fixes_the_length_of_every_sequence():
    generator = torch.Generator().manual_seed(0)
    assert live_task("reverse", 6, shortest=6).batch(50, generator).valid.all()
    varied = live_task("sort", 6).batch(50, generator).valid.sum(1)
    assert varied.min() >= 2 and varied.max() <= 6 and len(varied.unique()) > 1
    assert LiveSettings(shortest=6).shortest == 6
    for wrong in (1, 7):
        with pytest.raises(ValueError, match="shortest"):
            LiveSettings(shortest=wrong)


def test_caps_steps_seconds_and_stop():
    with pytest.raises(ValueError, match="steps"):
        LiveSettings(steps=MAX_STEPS + 1)
    with pytest.raises(ValueError, match="max_seconds"):
        LiveSettings(max_seconds=10_000)
    with pytest.raises(ValueError, match="reverse or sort"):
        LiveSettings(task="induction", model="gru")
    # Never more than MAX_SNAPSHOTS, whatever snapshot_every says.
    assert LiveSettings(steps=MAX_STEPS, snapshot_every=1).every * (MAX_SNAPSHOTS - 1) >= MAX_STEPS
    # The seconds cap ends a run early, at a snapshot.
    capped = list(train_live("reverse", steps=MAX_STEPS, max_seconds=0.5))
    assert capped[-1].step < MAX_STEPS and capped[-1].seconds >= 0.5
    # should_stop is asked before every step.
    calls = []
    stopped = list(train_live("reverse", steps=100, snapshot_every=5, should_stop=lambda: len(calls) > 7 or
                              calls.append(1)))
    assert stopped[-1].step == 5 and len(calls) == 8


def test_the_race_gives_both_runners_the_same_training_time():
    runners = race_settings(LiveSettings(seed=2))
    assert [r.model for r in runners] == ["transformer", "gru"]
    assert runners[0].schedule == runners[1].schedule == "constant"
    seen = {0: [], 1: []}
    for index, snapshot in race(runners, 1.0):
        # Whoever goes next has had the least training so far.
        others = [seen[i][-1].training_seconds if seen[i] else 0.0 for i in seen if i != index]
        before = seen[index][-1].training_seconds if seen[index] else 0.0
        assert before <= min(others) + 1e-9
        seen[index].append(snapshot)
    for snapshots in seen.values():
        assert snapshots[0].step == 0 and snapshots[-1].training_seconds >= 1.0
        assert snapshots[-2].training_seconds < 1.0  # stopped at the first snapshot past the budget
    # Each runner's steps are those of its own run: the race only interleaves them.
    alone = list(itertools.islice(run_settings(runners[1]), len(seen[1])))
    assert same(seen[1], alone)


def test_recurrent_baseline_reads_only_the_real_tokens_and_decodes_greedily():
    with seeded(0):
        model = RecurrentSeq2Seq("gru", 10, 12)
    source = torch.tensor([[3, 4, 5, 0, 0], [6, 7, 8, 9, 3]])
    valid = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)
    state = model.encode(source, valid)
    _, alone = model.encoder(model.source_embed(source[:1, :3]))  # the first row without its padding
    torch.testing.assert_close(state[:, :1], alone)
    _, whole = model.encoder(model.source_embed(source[1:]))
    torch.testing.assert_close(state[:, 1:], whole)
    # Greedy decoding: feeding its own output back, teacher forcing gives the same choices.
    generated, _ = model.generate(source, 4, 1, valid=valid)
    logits, _ = model(source, torch.cat([torch.ones(2, 1, dtype=torch.long), generated[:, :-1]], 1), valid=valid)
    assert torch.equal(logits.argmax(-1), generated)
    with seeded(0):
        lstm = RecurrentSeq2Seq("lstm", 10, 12)
    h, c = lstm.encode(source, valid)
    _, (h1, c1) = lstm.encoder(lstm.source_embed(source[:1, :3]))
    torch.testing.assert_close(h[:, :1], h1)
    torch.testing.assert_close(c[:, :1], c1)
    with pytest.raises(ValueError):
        RecurrentSeq2Seq("rnn", 10, 12)


@pytest.mark.parametrize("kind", ["gru", "lstm"])
def test_the_baseline_has_about_the_transformers_parameter_count(kind):
    task = live_task("reverse")
    config = TransformerConfig(vocab_size=task.vocab_size, d_model=32, n_heads=2, n_layers=2,
                               architecture="encoder-decoder", max_len=task.max_len)
    hidden = matched_hidden_size(kind, task, config)
    ours = sum(p.numel() for p in build(LiveSettings(model=kind), task).parameters())
    theirs = sum(p.numel() for p in build(LiveSettings(), task).parameters())
    assert build(LiveSettings(model=kind), task).hidden_size == hidden
    assert abs(ours - theirs) / theirs < 0.06
