"""explorer.analysis.sampling against Hugging Face transformers' own logits warpers and closed forms.

The reference: TemperatureLogitsWarper, TopKLogitsWarper and TopPLogitsWarper (transformers 5.23,
requirements-test.txt), chained in the order `generate(do_sample=True)` chains them.  Their output
is logits with −∞ where a token was removed: the kept set is where it is finite, the distribution
its softmax.  Sampled generation is checked against the model's own greedy `generate` and against
one parallel forward pass over what was drawn.
"""

import numpy as np
import pytest
import torch

from explorer.analysis.decoding import teacher_forced_pass
from explorer.analysis.sampling import SamplingStages, generate_sampled, greedy, sample, sampling_stages
from explorer.training.pretrained import load_model
from explorer.training.tasks import BOS

logits_process = pytest.importorskip("transformers.generation.logits_process",
                                     reason="transformers is pinned in requirements-test.txt")


def _reference(logits: np.ndarray, temperature: float, top_k, top_p) -> tuple[np.ndarray, np.ndarray]:
    """(kept, distribution) by transformers' warpers, in float64."""
    scores = torch.tensor(logits, dtype=torch.float64)[None]
    warpers = [logits_process.TemperatureLogitsWarper(float(temperature))]
    if top_k is not None:
        warpers.append(logits_process.TopKLogitsWarper(top_k))
    if top_p is not None:
        warpers.append(logits_process.TopPLogitsWarper(top_p))
    for warper in warpers:
        scores = warper(None, scores)
    return torch.isfinite(scores[0]).numpy(), torch.softmax(scores[0], -1).numpy()


def _case(seed: int):
    rng = np.random.default_rng(seed)
    vocab = int(rng.integers(2, 80))
    logits = rng.normal(0, rng.uniform(0.5, 6), vocab)
    temperature = float(rng.choice([rng.uniform(0.05, 1), rng.uniform(1, 5)]))
    top_k = None if rng.random() < 0.3 else int(rng.integers(1, vocab + 3))
    top_p = None if rng.random() < 0.3 else float(rng.uniform(0.01, 1))
    return logits, temperature, top_k, top_p


@pytest.mark.parametrize("seed", range(400))
def test_kept_sets_and_distribution_equal_transformers_warpers(seed):
    logits, temperature, top_k, top_p = _case(seed)
    stages = sampling_stages(logits, temperature, top_k, top_p)
    kept, distribution = _reference(logits, temperature, top_k, top_p)
    np.testing.assert_array_equal(stages.kept, kept)
    np.testing.assert_allclose(stages.distribution, distribution, atol=1e-12, rtol=0)
    np.testing.assert_allclose(stages.probs, torch.softmax(torch.tensor(logits) / temperature, -1).numpy(),
                               atol=1e-12, rtol=0)
    top_k_kept, top_k_probs = _reference(logits, temperature, top_k, None)
    np.testing.assert_array_equal(stages.top_k_kept, top_k_kept)
    np.testing.assert_allclose(stages.top_k_probs, top_k_probs, atol=1e-12, rtol=0)


def test_each_stage_changes_something_on_some_case():
    """The reference comparison above is not vacuous: top-k and top-p each remove tokens on most cases."""
    removed_k = removed_p = 0
    for seed in range(400):
        stages = sampling_stages(*_case(seed))
        removed_k += int(stages.top_k_kept.sum() < stages.logits.size)
        removed_p += int(stages.kept.sum() < stages.top_k_kept.sum())
    assert removed_k > 150 and removed_p > 150


def test_torch_logits_and_float32_give_the_same_stages():
    logits = np.random.default_rng(0).normal(0, 2, 30)
    a = sampling_stages(logits, 0.7, 10, 0.9)
    b = sampling_stages(torch.tensor(logits, dtype=torch.float32), 0.7, 10, 0.9)
    np.testing.assert_array_equal(a.kept, b.kept)
    np.testing.assert_allclose(a.distribution, b.distribution, atol=1e-6)


def test_closed_forms():
    rng = np.random.default_rng(1)
    logits = rng.normal(0, 3, 50)
    softmax = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    plain = sampling_stages(logits)  # temperature 1, nothing removed: softmax
    np.testing.assert_allclose(plain.probs, softmax, atol=1e-14)
    np.testing.assert_allclose(plain.distribution, softmax, atol=1e-14)
    assert plain.kept.all()
    one = sampling_stages(logits, 1.3, top_k=1)
    assert one.kept.sum() == 1 and one.distribution[np.argmax(logits)] == 1.0
    assert sampling_stages(logits, 0.2, top_p=1.0).kept.all()  # p = 1 keeps every token
    assert sampling_stages(logits, 0.2, top_k=50).kept.all() and sampling_stages(logits, 0.2, top_k=500).kept.all()
    hot = sampling_stages(logits, 2.0)  # a higher temperature flattens: lower maximum, higher entropy
    cold = sampling_stages(logits, 0.5)
    assert hot.probs.max() < plain.probs.max() < cold.probs.max()
    assert sampling_stages(logits, 1e-6).distribution[np.argmax(logits)] == pytest.approx(1.0)


def test_extreme_temperatures_stay_distributions():
    """A temperature of 1e-300 would send logits / T to ±∞: the result is still one-hot at the argmax;
    1e300 gives the uniform distribution."""
    logits = np.array([2.0, 5.0, -1.0, 4.9])
    for top_k, top_p in ((None, None), (2, None), (None, 0.5), (3, 0.9)):
        cold = sampling_stages(logits, 1e-300, top_k, top_p)
        assert cold.distribution.tolist() == [0.0, 1.0, 0.0, 0.0] and cold.probs.tolist() == [0.0, 1.0, 0.0, 0.0]
    np.testing.assert_allclose(sampling_stages(logits, 1e300).probs, 0.25, atol=1e-15)
    assert sampling_stages(logits, 1e300, top_k=2).kept.tolist() == [False, True, False, True]


def test_nucleus_by_hand():
    """probs 0.5, 0.3, 0.15, 0.05: p = 0.75 needs the first two (0.8), p = 0.85 three (0.95)."""
    logits = np.log([0.05, 0.5, 0.15, 0.3])
    assert sampling_stages(logits, top_p=0.4).kept.tolist() == [False, True, False, False]
    assert sampling_stages(logits, top_p=0.75).kept.tolist() == [False, True, False, True]
    np.testing.assert_allclose(sampling_stages(logits, top_p=0.75).distribution, [0, 0.625, 0, 0.375])
    assert sampling_stages(logits, top_p=0.85).kept.tolist() == [False, True, True, True]
    assert sampling_stages(logits, top_p=0.999).kept.all()
    # top-p reads the distribution after top-k, renormalised: with k = 2 it is 0.625 / 0.375
    assert sampling_stages(logits, top_k=2, top_p=0.6).kept.tolist() == [False, True, False, False]
    assert sampling_stages(logits, top_k=2, top_p=0.65).kept.tolist() == [False, True, False, True]


def test_ties_are_kept_together():
    logits = np.array([1.0, 3.0, 2.0, 2.0, 0.0])
    assert sampling_stages(logits, top_k=2).kept.tolist() == [False, True, True, True, False]  # as transformers
    assert _reference(logits, 1.0, 2, None)[0].tolist() == [False, True, True, True, False]
    even = np.array([0.0, 1.0, 1.0, -5.0])  # two tokens of equal probability: p = 0.3 keeps both, not one
    assert sampling_stages(even, top_p=0.3).kept.tolist() == [False, True, True, False]
    assert greedy(np.array([1.0, 4.0, 4.0])) == 1  # the lowest id among tied maxima


def test_minus_infinity_is_never_kept():
    logits = np.array([-np.inf, 1.0, 0.5, -np.inf])
    for stages in (sampling_stages(logits), sampling_stages(logits, top_k=3), sampling_stages(logits, top_p=1)):
        assert stages.kept.tolist() == [False, True, True, False]
        assert stages.distribution[[0, 3]].tolist() == [0.0, 0.0]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"temperature": 0}, "greedy"),
    ({"temperature": 0.0}, "greedy"),
    ({"temperature": -1.0}, "positive"),
    ({"temperature": float("nan")}, "positive"),
    ({"temperature": float("inf")}, "positive"),
    ({"temperature": "1"}, "number"),
    ({"top_k": 0}, "top_k"),
    ({"top_k": 2.5}, "top_k"),
    ({"top_p": 0.0}, "top_p"),
    ({"top_p": 1.5}, "top_p"),
])
def test_bad_settings_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        sampling_stages(np.zeros(5), **kwargs)


@pytest.mark.parametrize(("logits", "message"), [
    (np.zeros((2, 3)), "one vector"), (np.zeros(0), "one vector"), (np.array([1.0, np.nan]), "NaN"),
    (np.array([1.0, np.inf]), "NaN or"), (np.full(3, -np.inf), "every logit"),
])
def test_bad_logits_are_refused(logits, message):
    with pytest.raises(ValueError, match=message):
        sampling_stages(logits)


def test_a_sample_depends_on_its_seed_only_and_leaves_the_global_generator_alone():
    stages = sampling_stages(np.random.default_rng(2).normal(0, 1, 20), 1.0, top_k=8)
    state, np_state = torch.get_rng_state(), np.random.get_state()[1].copy()
    draws = [sample(stages, seed) for seed in range(200)]
    assert torch.equal(torch.get_rng_state(), state)
    assert np.array_equal(np.random.get_state()[1], np_state)
    torch.manual_seed(123)  # whatever the global generator holds, a seed's draw is the same
    assert [sample(stages, seed) for seed in range(200)] == draws
    assert len(set(draws)) > 3
    assert all(stages.kept[d] for d in draws)  # never a removed token
    reference = [int(torch.multinomial(torch.tensor(stages.distribution), 1,
                                       generator=torch.Generator().manual_seed(s))) for s in range(200)]
    assert draws == reference


def test_draws_follow_the_distribution():
    """Over 6000 seeds each token's share is within 4 standard errors of its probability."""
    probs = np.array([0.5, 0.25, 0.15, 0.1, 0.0])
    n = 6000
    counts = np.bincount([sample(probs, seed) for seed in range(n)], minlength=5)
    assert counts[4] == 0
    assert np.all(np.abs(counts / n - probs) <= 4 * np.sqrt(probs * (1 - probs) / n) + 1e-12)


@pytest.mark.parametrize(("probs", "seed", "message"), [
    ([0.5, 0.6], 0, "sum"), ([1.2, -0.2], 0, "negative"), ([[1.0]], 0, "one vector"), ([1.0], -1, "seed"),
])
def test_sample_refuses_what_is_no_distribution(probs, seed, message):
    with pytest.raises(ValueError, match=message):
        sample(np.array(probs), seed)


PROMPT = ["t3", "t7", "t1", "t9", "t4", "t3"]


@pytest.fixture(scope="module")
def induction():
    return load_model("induction-sinusoidal-h2-l2")


def test_the_same_seed_gives_the_same_continuation(induction):
    ids = induction.task.encode(PROMPT[:4])  # no repeat begun: the model is unsure what comes next
    state = torch.get_rng_state()
    runs = {seed: generate_sampled(induction.model, ids, 8, temperature=2.0, seed=seed) for seed in range(6)}
    assert torch.equal(torch.get_rng_state(), state)
    torch.manual_seed(99)  # whatever the global generator holds
    assert generate_sampled(induction.model, ids, 8, temperature=2.0, seed=3).tokens == runs[3].tokens
    assert len({run.tokens for run in runs.values()}) > 3  # unsure and hot enough that seeds differ
    assert all(len(run.tokens) == len(run.stages) == 8 for run in runs.values())


@pytest.mark.parametrize("name", ["induction-sinusoidal-h2-l2", "reverse-sinusoidal-h4-l2"])
def test_a_tiny_temperature_or_top_k_1_is_greedy(name):
    loaded = load_model(name)
    task, model = loaded.task, loaded.model
    decoder_only = model.config.architecture == "decoder"
    ids = task.encode(PROMPT if decoder_only else list("HELLO"))
    start = None if decoder_only else task.index[BOS]
    greedy_ids, _ = model.generate(torch.tensor([ids]), 6, start)
    for seed in range(3):
        cold = generate_sampled(model, ids, 6, temperature=1e-6, seed=seed, start_token=start)
        assert list(cold.tokens) == greedy_ids[0].tolist()
        one = generate_sampled(model, ids, 6, temperature=3.0, top_k=1, seed=seed, start_token=start)
        assert list(one.tokens) == greedy_ids[0].tolist()


def test_each_step_reads_the_models_own_distribution(induction):
    """The stages of every step are the rows of one parallel forward pass over the drawn tokens."""
    ids = induction.task.encode(PROMPT)
    run = generate_sampled(induction.model, ids, 8, temperature=1.0, top_p=0.95, seed=5)
    probs = teacher_forced_pass(induction.model, ids, None, list(run.tokens))
    for step, row, token in zip(run.stages, probs, run.tokens, strict=True):
        assert isinstance(step, SamplingStages)
        np.testing.assert_allclose(step.probs, row, atol=1e-5)
        assert step.kept[token]


def test_generate_sampled_refuses_bad_calls(induction):
    ids = induction.task.encode(PROMPT)
    with pytest.raises(ValueError, match="start token"):
        generate_sampled(induction.model, ids, 3, start_token=1)
    with pytest.raises(ValueError, match="greedy"):
        generate_sampled(induction.model, ids, 3, temperature=0)
    with pytest.raises(ValueError, match="n_steps"):
        generate_sampled(induction.model, ids, -1)
    with pytest.raises(ValueError, match="empty"):
        generate_sampled(induction.model, [], 3)
