"""explorer.lessons.decoder.models: what the decoder page shows, against the library it is computed from."""

import subprocess
import sys

import numpy as np
import pytest
import torch

from explorer.analysis.cost import cache_setup_cost, generation_step_cost
from explorer.analysis.decoding import decode_steps
from explorer.lessons.decoder.models import (
    DECODER_MODELS,
    architecture_rows,
    decoding_run,
    example,
    induction_answer,
    step_counts,
)
from explorer.model.building import shapes_only
from explorer.model.parameters import count_parameters
from explorer.model.transformer import Transformer, TransformerConfig
from explorer.training.pretrained import load_model

PROMPT = ("t3", "t7", "t1", "t9", "t4", "t3")


@pytest.mark.parametrize("prompt, answer", [
    ("t3 t7 t1 t9 t4 t3", ["t7", "t1", "t9", "t4"]),
    ("t3 t7 t1 t9 t4 t3 t7 t1", ["t9", "t4"]),
    ("t3 t7 t1", None),  # no repeat begun
    ("t3 t7 t3 t9", None),  # the repeat breaks off
    ("t3 t7 t3 t7", None),  # the repeat is complete: nothing left
])
def test_induction_answer_is_the_rest_of_the_repeat(prompt, answer):
    assert induction_answer(prompt.split()) == answer


def test_examples():
    ex = example("reverse", tuple("HELLO"))
    assert ex.n_steps == 6 and ex.expected == (*"OLLEH", "</s>") and ex.start == load_model(
        DECODER_MODELS["reverse"]).task.index["<s>"]
    ex = example("induction", PROMPT)
    assert ex.start is None and ex.n_steps == 4 and ex.expected == ("t7", "t1", "t9", "t4")
    ex = example("induction", ("t1", "t2", "t1"))  # one token left to finish: free running, never one step
    assert ex.expected is None and ex.n_steps == 6
    with pytest.raises(ValueError, match="no room"):
        example("induction", tuple(f"t{i % 20}" for i in range(19)))


def test_a_free_run_is_decode_steps_as_arrays():
    run = decoding_run("sort", tuple("PEACH"))
    loaded = load_model(DECODER_MODELS["sort"])
    steps = decode_steps(loaded.model, loaded.task.encode(list("PEACH")), 6, loaded.task.index["<s>"])
    assert run.written == run.greedy == ("A", "C", "E", "H", "P", "</s>")
    assert run.queries == ("<s>", "A", "C", "E", "H", "P") and run.keys == run.queries
    # Not bit for bit: the cached run may have been made under another torch thread count.
    np.testing.assert_allclose(run.probs, np.stack([s.probs for s in steps]), atol=1e-6)
    for k, step in enumerate(steps):
        np.testing.assert_allclose(run.self_weights[k, ..., :k + 1], step.self_weights, atol=1e-6)
        assert np.isnan(run.self_weights[k, ..., k + 1:]).all()
        np.testing.assert_allclose(run.cross_weights[k], step.cross_weights, atol=1e-6)
    right = loaded.task.encode([*"ACEHP", "</s>"])
    np.testing.assert_allclose(run.losses, -np.log(run.probs[np.arange(6), right]), rtol=1e-12)
    for array in (run.probs, run.self_weights, run.cross_weights, run.losses):
        assert not array.flags.writeable, "shared by every session: read-only"


def test_a_mistake_is_the_likeliest_wrong_token_and_only_free_running_reads_it():
    clean = decoding_run("reverse", tuple("HELLO"))
    free = decoding_run("reverse", tuple("HELLO"), False, 1)
    forced = decoding_run("reverse", tuple("HELLO"), True, 1)
    order = [clean.vocab[i] for i in np.argsort(-clean.probs[1])]
    wrong = next(t for t in order if t not in ("L", "<pad>", "<s>"))
    assert free.written[1] == forced.written[1] == wrong != "L"
    assert free.queries[2] == wrong and forced.queries[2] == "L"
    np.testing.assert_allclose(forced.probs, decoding_run("reverse", tuple("HELLO"), True).probs, atol=1e-12)
    assert free.losses[2:].sum() > 10 > forced.losses.sum()


def test_decoder_only_runs_and_bad_requests():
    run = decoding_run("induction", PROMPT)
    assert run.cross_weights is None and run.keys[:6] == PROMPT
    assert run.self_weights.shape == (4, 2, 2, 9)
    with pytest.raises(ValueError, match="right answer"):
        decoding_run("induction", ("t1", "t2", "t3"), True)
    with pytest.raises(ValueError, match="outside"):
        decoding_run("reverse", tuple("HELLO"), False, 6)
    # Without a right answer, the mistake is the likeliest token other than the model's own choice.
    clean = decoding_run("induction", ("t1", "t2", "t3"))
    free = decoding_run("induction", ("t1", "t2", "t3"), False, 2)
    assert free.losses is None and free.greedy[2] == clean.greedy[2] != free.written[2]


def test_step_counts_are_the_cost_functions():
    config = load_model(DECODER_MODELS["reverse"]).model.config
    counts = step_counts("reverse", 4, 5)
    assert counts.uncached == tuple(generation_step_cost(T, 64, 2, config.vocab_size, T_src=4).total
                                    for T in range(1, 6))
    assert counts.cached == tuple(generation_step_cost(T, 64, 2, config.vocab_size, T_src=4, cache=True).total
                                  for T in range(1, 6))
    assert counts.setup == cache_setup_cost(64, 2, 4).total
    assert counts.encoder == cache_setup_cost(64, 2, 4).encoder > 0  # run once, with the cache or without
    assert counts.uncached_total == counts.encoder + sum(counts.uncached)
    assert counts.cached_total == counts.setup + sum(counts.cached)
    counts = step_counts("induction", 6, 3)  # the first cached step reads the whole prompt
    assert counts.cached[0] == counts.uncached[0] and counts.cached[1] < counts.uncached[1] / 4
    assert counts.setup == counts.encoder == 0


@pytest.mark.parametrize("d, layers, vocab", [(16, 1, 7), (32, 3, 50)])
def test_architecture_rows_are_counted_on_built_models(d, layers, vocab):
    rows = {row.name: row for row in architecture_rows(d, layers, vocab)}

    def built(architecture, n):
        torch.manual_seed(0)
        model = Transformer(TransformerConfig(vocab_size=vocab, d_model=d, n_heads=4, n_layers=n,
                                              architecture=architecture, norm="pre"))
        return count_parameters(model), vocab * d * (2 if architecture == "encoder-decoder" else 1) + d * vocab + vocab

    for name, architecture, n in [("encoder-only", "encoder", layers), ("decoder-only", "decoder", layers),
                                  ("decoder-only, twice as deep", "decoder", 2 * layers),
                                  ("encoder–decoder", "encoder-decoder", layers)]:
        total, embeddings = built(architecture, n)
        assert rows[name].parameters == total and rows[name].in_embeddings == embeddings
        assert rows[name].in_layers == total - embeddings


def test_shapes_only_builds_without_memory_and_without_importing_the_compiler():
    with shapes_only():
        model = Transformer(TransformerConfig(vocab_size=50_000, d_model=1024, n_layers=12,
                                              architecture="encoder-decoder"))
    assert all(p.is_meta for p in model.parameters()) and count_parameters(model) > 400_000_000
    assert torch.nn.Embedding(3, 3).weight.std() > 0, "outside, initialisers run as ever"
    code = ("import sys, explorer.lessons.decoder.models as v; v.architecture_rows(64, 2, 19); "
            "print('torch._dynamo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.strip() == "False"
