"""explorer.model.building: seeded builds from a private generator, loaded builds that draw nothing.

The reference is torch itself: a model built under `seeded(s)` must have exactly the weights that
`torch.manual_seed(s)` followed by the same constructor gives (the numbers every lesson documents),
for every kind of model the app builds, while torch's global generator is left as it was.
"""

from __future__ import annotations

import threading

import pytest
import torch
from torch import nn

from explorer.analysis.gradients import build_sequence_model
from explorer.model.building import seeded, shapes_only, with_weights
from explorer.model.positional import ENCODINGS
from explorer.model.rnn import RECURRENT_KINDS, RecurrentNet, RecurrentTagger
from explorer.model.seq2seq import SEQ2SEQ_KINDS, RecurrentSeq2Seq
from explorer.model.transformer import ARCHITECTURES, EncoderLayer, Transformer, TransformerConfig
from explorer.training.pretrained import MODEL_SPECS, build_model, load_model_uncached, read_card
from explorer.training.tasks import get_task


def _transformer(architecture: str, encoding: str):
    return lambda: Transformer(TransformerConfig(vocab_size=20, d_model=32, n_heads=4, n_layers=2,
                                                 architecture=architecture, encoding=encoding, norm="pre"))


def _orthogonal(kind: str):
    def build():
        net = RecurrentNet(kind, 8, 8)
        with torch.no_grad():
            for block in net.cell.weight_hh.split(8, dim=0):
                nn.init.orthogonal_(block, gain=0.9)
        return net
    return build


BUILDS = {
    **{f"transformer {a} {e}": _transformer(a, e) for a in ARCHITECTURES for e in ENCODINGS},
    **{f"RecurrentNet {k}": (lambda k=k: RecurrentNet(k, 16, 16)) for k in RECURRENT_KINDS},
    **{f"RecurrentNet {k}, orthogonal": _orthogonal(k) for k in RECURRENT_KINDS},
    **{f"RecurrentTagger {k}": (lambda k=k: RecurrentTagger(k, 12, 16)) for k in RECURRENT_KINDS},
    **{f"RecurrentSeq2Seq {k}": (lambda k=k: RecurrentSeq2Seq(k, 12, 16)) for k in SEQ2SEQ_KINDS},
    "EncoderLayer, no norm": lambda: EncoderLayer(16, 4, 64, norm="none", residual=False),
    "torch.nn.RNN": lambda: nn.RNN(8, 8, batch_first=True),
    "torch.nn.MultiheadAttention": lambda: nn.MultiheadAttention(8, 4, batch_first=True),
    "torch.randn, rand_like, randperm": lambda: nn.ParameterList(
        [torch.randn(3), torch.rand_like(torch.zeros(2)), torch.randperm(5).float()]),
}


@pytest.mark.parametrize("name", BUILDS)
@pytest.mark.parametrize("seed", [0, 7])
def test_a_seeded_build_has_the_weights_torch_manual_seed_gives_and_leaves_the_global_generator_alone(name, seed):
    torch.manual_seed(seed)
    expected = BUILDS[name]().state_dict()
    torch.manual_seed(12345)
    before = torch.get_rng_state()
    with seeded(seed):
        got = BUILDS[name]().state_dict()
    assert torch.equal(torch.get_rng_state(), before)
    assert got.keys() == expected.keys()
    assert all(torch.equal(got[k], expected[k]) for k in expected)


def test_seeded_gives_only_this_thread_the_generator():
    torch.manual_seed(3)
    expected_elsewhere = torch.rand(4)
    torch.manual_seed(3)
    drawn = {}
    with seeded(0) as generator:
        thread = threading.Thread(target=lambda: drawn.setdefault("other thread", torch.rand(4)))
        thread.start()
        thread.join()
        drawn["here"] = torch.rand(4)
        drawn["named generator"] = torch.rand(4, generator=torch.Generator().manual_seed(9))
    assert torch.equal(drawn["other thread"], expected_elsewhere)  # the global generator, as if nothing happened
    assert torch.equal(drawn["here"], torch.rand(4, generator=torch.Generator().manual_seed(0)))
    assert torch.equal(drawn["named generator"], torch.rand(4, generator=torch.Generator().manual_seed(9)))
    assert generator.initial_seed() == 0


def test_build_sequence_model_is_the_same_whatever_the_global_generator():
    x = torch.randn(1, 10, 8, dtype=torch.float64)
    first = build_sequence_model("lstm", 8, init="orthogonal", gain=1.2, seed=5)(x)
    torch.manual_seed(99)
    torch.rand(1000)
    assert torch.equal(build_sequence_model("lstm", 8, init="orthogonal", gain=1.2, seed=5)(x), first)


@pytest.mark.parametrize("spec", [s for s in MODEL_SPECS if s.name in (
    "reverse-learned-h4-l2", "reverse-alibi-h4-l2", "sort-sinusoidal-h4-l2", "recall-lstm", "recall-rnn")],
    ids=lambda s: s.name)
def test_a_shipped_model_loads_without_drawing_a_random_number(spec):
    torch.manual_seed(1)
    before = torch.get_rng_state()
    loaded = load_model_uncached(spec.name)
    assert torch.equal(torch.get_rng_state(), before)
    assert not any(t.is_meta for t in (*loaded.model.parameters(), *loaded.model.buffers()))
    # The same as building it the old way (random weights drawn, then overwritten by the file's).
    card = read_card(spec.name)
    old = build_model(card["kind"], get_task(card["task"]), card["config"])
    old.load_state_dict(loaded.model.state_dict())
    tokens = torch.tensor([[1, 2, 3, 4]])
    if card["kind"] == "transformer" and old.config.architecture == "encoder-decoder":
        args = (tokens, torch.tensor([[1, 2]]))
    else:
        args = (tokens,)
    assert torch.equal(loaded.model(*args)[0], old.eval()(*args)[0])
    for name, buffer in old.named_buffers():  # buffers made in __init__ (the sinusoidal table) are kept
        assert torch.equal(dict(loaded.model.named_buffers())[name], buffer)


def test_with_weights_refuses_missing_and_misshapen_tensors():
    state = nn.Linear(3, 2).state_dict()
    assert torch.equal(with_weights(lambda: nn.Linear(3, 2), state).weight, state["weight"])
    with pytest.raises(ValueError, match="bias"):
        with_weights(lambda: nn.Linear(3, 2), {"weight": state["weight"]})
    with pytest.raises(ValueError, match="size mismatch"):
        with_weights(lambda: nn.Linear(4, 2), state)


class _FactoryBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("made", torch.ones(3), persistent=False)


def test_with_weights_refuses_a_buffer_it_cannot_fill():
    with pytest.raises(ValueError, match="made"):
        with_weights(_FactoryBuffer, {})


def test_shapes_only_allocates_nothing():
    with shapes_only():
        model = _transformer("encoder-decoder", "learned")()
    assert all(p.is_meta for p in model.parameters())
