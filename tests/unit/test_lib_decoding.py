"""explorer.analysis.decoding.decode_steps against one parallel forward pass.

Teacher forcing is what training computes in one pass over the shifted target: every step's
distribution must be that pass's softmax row, and every step's attention rows that pass's rows.
Free running must write what generate writes.
"""

import numpy as np
import pytest
import torch

from explorer.analysis.decoding import decode_steps
from explorer.model.transformer import Transformer, TransformerConfig
from explorer.training.pretrained import load_model
from explorer.training.tasks import BOS, EOS

TOLERANCE = 1e-5


def _full(model, source, decoder_input):
    with torch.no_grad():
        if model.config.architecture == "encoder-decoder":
            return model(torch.tensor([source]), torch.tensor([decoder_input]))
        return model(torch.tensor([decoder_input]))


def _check_rows(steps, logits, trace, first_row: int):
    """Step k is row first_row + k of the parallel pass: distribution and attention rows."""
    probs = torch.softmax(logits[0].double(), -1).numpy()
    for k, step in enumerate(steps):
        row = first_row + k
        np.testing.assert_allclose(step.probs, probs[row], atol=TOLERANCE, rtol=0)
        assert step.token == int(np.argmax(probs[row]))
        self_rows = np.stack([layer.self_attention.weights[0, :, row, :row + 1].double().numpy()
                              for layer in trace.decoder_layers])
        assert step.self_weights.shape == self_rows.shape  # (layers, heads, keys so far)
        np.testing.assert_allclose(step.self_weights, self_rows, atol=TOLERANCE, rtol=0)
        if step.cross_weights is not None:
            cross_rows = np.stack([layer.cross_attention.weights[0, :, row].double().numpy()
                                   for layer in trace.decoder_layers])
            np.testing.assert_allclose(step.cross_weights, cross_rows, atol=TOLERANCE, rtol=0)


@pytest.mark.parametrize("name", ["reverse-sinusoidal-h4-l2", "sort-sinusoidal-h4-l2", "reverse-rope-h4-l2",
                                  "reverse-alibi-h4-l2"])
def test_teacher_forced_steps_are_the_rows_of_one_parallel_pass(name):
    loaded = load_model(name)
    task, model = loaded.task, loaded.model
    source = task.encode(list("HELLO"))
    teacher = task.encode(task.expected_output(list("HELLO")))  # the answer and </s>
    bos = task.index[BOS]
    steps = decode_steps(model, source, len(teacher), bos, teacher=teacher)
    assert len(steps) == len(teacher)
    assert [s.input for s in steps] == [(bos,), *((t,) for t in teacher[:-1])]
    logits, trace = _full(model, source, [bos, *teacher[:-1]])  # the shifted target
    _check_rows(steps, logits, trace, 0)


def test_teacher_forcing_with_a_wrong_teacher_still_matches_the_parallel_pass():
    """Not only when the model is right: a teacher the model disagrees with, row by row."""
    loaded = load_model("sort-sinusoidal-h4-l2")
    task, model = loaded.task, loaded.model
    source = task.encode(list("DACB"))
    teacher = task.encode([*"DDAB", EOS])
    steps = decode_steps(model, source, 5, task.index[BOS], teacher=teacher)
    logits, trace = _full(model, source, [task.index[BOS], *teacher[:-1]])
    _check_rows(steps, logits, trace, 0)
    assert steps[0].token != teacher[0], "the model does not agree with this teacher"


def test_decoder_only_teacher_forcing_continues_the_prompt():
    loaded = load_model("induction-sinusoidal-h2-l2")
    task, model = loaded.task, loaded.model
    prompt = task.encode(["t3", "t7", "t1", "t9", "t4", "t3"])
    teacher = task.encode(["t7", "t1", "t9", "t4"])
    steps = decode_steps(model, prompt, 4, None, teacher=teacher)
    assert steps[0].input == tuple(prompt) and steps[1].input == (teacher[0],)
    logits, trace = _full(model, None, [*prompt, *teacher[:-1]])
    _check_rows(steps, logits, trace, len(prompt) - 1)
    assert all(s.cross_weights is None for s in steps)
    assert [s.token for s in steps] == teacher, "the trained model copies the repeat"


@pytest.mark.parametrize("architecture", ["encoder-decoder", "decoder"])
@pytest.mark.parametrize("encoding", ["learned", "rope", "alibi", "t5"])
def test_free_running_writes_what_generate_writes_and_its_rows_are_the_full_pass(architecture, encoding):
    torch.manual_seed(5)
    model = Transformer(TransformerConfig(vocab_size=11, d_model=16, n_heads=4, n_layers=2, architecture=architecture,
                                          encoding=encoding, max_len=20)).eval()
    source = torch.randint(0, 11, (6,), generator=torch.Generator().manual_seed(6)).tolist()
    start = 1 if architecture == "encoder-decoder" else None
    steps = decode_steps(model, source, 8, start)
    generated, _ = model.generate(torch.tensor([source]), 8, start)
    assert [s.token for s in steps] == [s.written for s in steps] == generated[0].tolist()
    prefix = [start] if start is not None else source
    logits, trace = _full(model, source, [*prefix, *generated[0, :-1].tolist()])
    _check_rows(steps, logits, trace, len(prefix) - 1)


def test_a_replaced_token_is_fed_back_only_under_free_running():
    loaded = load_model("sort-sinusoidal-h4-l2")
    task, model = loaded.task, loaded.model
    source = task.encode(list("PEACH"))
    teacher = task.encode(task.expected_output(list("PEACH")))
    bos, wrong = task.index[BOS], task.index["H"]
    clean = decode_steps(model, source, 6, bos)
    free = decode_steps(model, source, 6, bos, replace={1: wrong})
    forced = decode_steps(model, source, 6, bos, teacher=teacher, replace={1: wrong})
    assert free[1].written == forced[1].written == wrong and free[1].token == clean[1].token
    assert free[2].input == (wrong,), "free running reads its own (wrong) output"
    assert forced[2].input == (teacher[1],), "teacher forcing reads the right token"
    np.testing.assert_array_equal(free[1].probs, clean[1].probs)  # the past is untouched
    for k in range(2, 6):  # the future is not, under free running; under teacher forcing it is clean
        np.testing.assert_allclose(forced[k].probs, clean[k].probs, atol=TOLERANCE)
    assert any(np.abs(free[k].probs - clean[k].probs).max() > 0.1 for k in range(2, 6))


def test_inputs_are_checked():
    loaded = load_model("reverse-sinusoidal-h4-l2")
    model = loaded.model
    with pytest.raises(ValueError, match="start token"):
        decode_steps(model, [3, 4, 5], 2, None)
    with pytest.raises(ValueError, match="teacher token for every step"):
        decode_steps(model, [3, 4, 5], 4, 1, teacher=[5, 4])
    with pytest.raises(ValueError, match="one sequence"):
        decode_steps(model, [[3, 4], [5, 6]], 2, 1)
    with pytest.raises(ValueError, match="does not decode"):
        decode_steps(load_model("coreference-sinusoidal-h4-l2").model, [3, 4], 1, None)


def test_padding_in_the_source_is_hidden():
    loaded = load_model("reverse-sinusoidal-h4-l2")
    task, model = loaded.task, loaded.model
    letters = task.encode(list("ABC"))
    plain = decode_steps(model, letters, 4, task.index[BOS])
    padded = decode_steps(model, [*letters, 0, 0], 4, task.index[BOS], valid=[True] * 3 + [False] * 2)
    assert [s.token for s in plain] == [s.token for s in padded]
    for a, b in zip(plain, padded, strict=True):
        np.testing.assert_allclose(a.probs, b.probs, atol=1e-4)
        assert np.all(b.cross_weights[..., 3:] == 0)
