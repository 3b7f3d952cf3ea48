"""explorer.analysis.cost: parameter counts against real modules, multiplications against torch's FLOP counter."""

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from explorer.analysis.cost import (
    Cost,
    PassCost,
    attention_cost,
    cache_setup_cost,
    conv1d_cost,
    decoder_layer_cost,
    encoder_layer_cost,
    ffn_cost,
    generation_step_cost,
    recurrent_cost,
    teacher_forced_cost,
)
from explorer.model.attention import MultiHeadAttention
from explorer.model.generation import IncrementalDecoder
from explorer.model.parameters import count_parameters
from explorer.model.rnn import RecurrentNet
from explorer.model.transformer import DecoderLayer, EncoderLayer, FeedForward, Transformer, TransformerConfig


def _numel(module):
    return sum(p.numel() for p in module.parameters())


def _multiplications(fn):
    """Multiply-adds of the matrix products / convolutions run by fn (FLOP counter reports 2 each)."""
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        fn()
    flops = counter.get_total_flops()
    assert flops % 2 == 0
    return flops // 2


@pytest.mark.parametrize("d,heads", [(8, 2), (12, 3), (16, 1)])
def test_attention_parameters(d, heads):
    params = attention_cost(5, d).parameters
    assert params == _numel(MultiHeadAttention(d, heads))
    assert params == _numel(torch.nn.MultiheadAttention(d, heads))


@pytest.mark.parametrize("d,d_ff", [(8, None), (6, 10)])
def test_ffn_parameters(d, d_ff):
    assert ffn_cost(5, d, d_ff).parameters == _numel(FeedForward(d, 4 * d if d_ff is None else d_ff))


@pytest.mark.parametrize("d,heads,d_ff", [(8, 2, None), (12, 4, 20)])
def test_encoder_layer_parameters(d, heads, d_ff):
    ff = 4 * d if d_ff is None else d_ff
    params = encoder_layer_cost(5, d, d_ff).parameters
    assert params == _numel(EncoderLayer(d, heads, ff))
    assert params == _numel(torch.nn.TransformerEncoderLayer(d, heads, ff, batch_first=True))


@pytest.mark.parametrize("d,heads,d_ff", [(8, 2, None), (12, 4, 20)])
def test_decoder_layer_parameters(d, heads, d_ff):
    ff = 4 * d if d_ff is None else d_ff
    params = decoder_layer_cost(5, d, T_src=9, d_ff=d_ff).parameters
    assert params == _numel(DecoderLayer(d, heads, ff))
    assert params == _numel(torch.nn.TransformerDecoderLayer(d, heads, ff, batch_first=True))


@pytest.mark.parametrize("kind,cls", [("rnn", torch.nn.RNN), ("lstm", torch.nn.LSTM), ("gru", torch.nn.GRU)])
@pytest.mark.parametrize("d_in,d_hidden", [(6, None), (3, 7)])
def test_recurrent_parameters(kind, cls, d_in, d_hidden):
    h = d_in if d_hidden is None else d_hidden
    params = recurrent_cost(kind, 10, d_in, d_hidden).parameters
    assert params == _numel(cls(d_in, h))
    assert params == _numel(RecurrentNet(kind, d_in, h))


@pytest.mark.parametrize("d,k", [(4, 3), (5, 2), (3, 4)])
def test_conv1d_parameters(d, k):
    assert conv1d_cost(9, d, k).parameters == _numel(torch.nn.Conv1d(d, d, k))


def test_count_parameters_counts_frozen_parameters_too():
    module = torch.nn.Linear(3, 4)
    module.bias.requires_grad_(False)
    assert count_parameters(module) == 16
    assert count_parameters(torch.nn.ReLU()) == 0


# --- multiplications --------------------------------------------------------------------------------


@pytest.mark.parametrize("T_q,T_k,d,heads", [(5, None, 8, 2), (3, 7, 12, 3), (6, 2, 8, 4)])
def test_attention_multiplications(T_q, T_k, d, heads):
    mha = MultiHeadAttention(d, heads)
    query = torch.randn(1, T_q, d)
    key_value = query if T_k is None else torch.randn(1, T_k, d)
    counted = _multiplications(lambda: mha(query, key_value))
    T_k_ = T_q if T_k is None else T_k
    by_hand = 2 * T_q * d * d + 2 * T_k_ * d * d + 2 * T_q * T_k_ * d  # Q,out / K,V / QKᵀ, AV
    assert counted == by_hand
    assert attention_cost(T_q, d, T_k).multiplications == by_hand


@pytest.mark.parametrize("T,d,d_ff", [(5, 8, None), (3, 6, 10)])
def test_ffn_multiplications(T, d, d_ff):
    ffn = FeedForward(d, 4 * d if d_ff is None else d_ff)
    x = torch.randn(1, T, d)
    assert ffn_cost(T, d, d_ff).multiplications == _multiplications(lambda: ffn(x))


def test_layer_multiplications_add_up():
    T, T_src, d, heads = 5, 7, 8, 2
    enc = EncoderLayer(d, heads, 4 * d)
    dec = DecoderLayer(d, heads, 4 * d)
    x, memory = torch.randn(1, T, d), torch.randn(1, T_src, d)
    assert encoder_layer_cost(T, d).multiplications == _multiplications(lambda: enc(x))
    assert decoder_layer_cost(T, d, T_src).multiplications == _multiplications(lambda: dec(x, memory))


@pytest.mark.parametrize("kind", ["rnn", "lstm", "gru"])
def test_recurrent_multiplications(kind):
    T, d_in, h = 6, 3, 5
    net = RecurrentNet(kind, d_in, h)
    x = torch.randn(1, T, d_in)
    gates = {"rnn": 1, "lstm": 4, "gru": 3}[kind]
    by_hand = T * gates * (d_in * h + h * h)
    assert _multiplications(lambda: net(x)) == by_hand
    assert recurrent_cost(kind, T, d_in, h).multiplications == by_hand


@pytest.mark.parametrize("T,d,k", [(9, 4, 3), (7, 3, 5), (8, 2, 2)])
def test_conv1d_multiplications(T, d, k):
    conv = torch.nn.Conv1d(d, d, k, padding="same")
    x = torch.randn(1, d, T)
    assert conv(x).shape == (1, d, T)
    assert conv1d_cost(T, d, k).multiplications == _multiplications(lambda: conv(x)) == T * k * d * d


# --- steps and path lengths ---------------------------------------------------------------------------


def test_sequential_steps_and_path_lengths():
    for kind in ("rnn", "lstm", "gru"):
        cost = recurrent_cost(kind, 17, 4)
        assert (cost.sequential_steps, cost.path_length) == (17, 17)
    for cost in (attention_cost(17, 4), attention_cost(3, 4, 9), ffn_cost(17, 4),
                 encoder_layer_cost(17, 4), decoder_layer_cost(17, 4, 5)):
        assert (cost.sequential_steps, cost.path_length) == (1, 1)
    # A convolution gives every output at once (the notes' O(T) is wrong); its path is what is long.
    assert (conv1d_cost(17, 4, 3).sequential_steps, conv1d_cost(17, 4, 3).path_length) == (1, 8)


@pytest.mark.parametrize("T,k,layers", [(10, 3, 5), (9, 3, 4), (2, 3, 1), (1, 3, 1), (16, 5, 4)])
def test_conv1d_path_length_is_layers_needed_to_connect_the_ends(T, k, layers):
    """Stacking L 'same' convolutions of width k grows the receptive field to 1 + L·(k−1)."""
    assert 1 + layers * (k - 1) >= T
    assert layers == 1 or 1 + (layers - 1) * (k - 1) < T
    assert conv1d_cost(T, 4, k).path_length == layers


def test_recurrent_cost_rejects_unknown_kind():
    with pytest.raises(ValueError):
        recurrent_cost("transformer", 3, 4)
    with pytest.raises(ValueError):
        conv1d_cost(3, 4, 0)


def test_width_one_convolution_is_rejected_because_it_never_connects_positions():
    with pytest.raises(ValueError, match="never connects"):
        conv1d_cost(8, 4, 1)


def test_cost_addition():
    assert Cost(1, 2, 3, 4) + Cost(10, 20, 30, 40) == Cost(11, 22, 33, 44)


# --- generation: a training pass, and one generated token with and without the KV cache -----------


def _model(architecture, encoding="sinusoidal", d=16, heads=2, layers=3, vocab=13, d_ff=None):
    torch.manual_seed(0)
    return Transformer(TransformerConfig(vocab_size=vocab, d_model=d, n_heads=heads, n_layers=layers,
                                         architecture=architecture, encoding=encoding, d_ff=d_ff, max_len=24)).eval()


@pytest.mark.parametrize("encoding", ["sinusoidal", "rope", "alibi", "t5"])
@pytest.mark.parametrize("d_ff", [None, 24])
def test_teacher_forced_pass_and_cached_steps_of_an_encoder_decoder(encoding, d_ff):
    T_src, T, d, layers, vocab = 7, 6, 16, 3, 13
    model = _model("encoder-decoder", encoding, d=d, layers=layers, vocab=vocab, d_ff=d_ff)
    source, target = torch.randint(0, vocab, (1, T_src)), torch.randint(0, vocab, (1, T))
    expected = teacher_forced_cost(T, d, layers, vocab, T_src=T_src, d_ff=d_ff)
    assert _multiplications(lambda: model(source, target)) == expected.total
    # The parts, each run on its own: the encoder, and the output projection of T positions.
    assert _multiplications(lambda: model.encoder(source, causal=False)) == expected.encoder
    assert expected.output == T * d * vocab
    made = {}
    assert _multiplications(lambda: made.setdefault("decoder", IncrementalDecoder(model, source))) == \
        cache_setup_cost(d, layers, T_src, d_ff).total
    for t in range(T):  # the step whose decoder input has t + 1 positions
        new, prefix = target[:, t:t + 1], target[:, :t + 1]
        counted = _multiplications(lambda: made["decoder"].step(new))  # noqa: B023 (called at once)
        assert counted == generation_step_cost(t + 1, d, layers, vocab, T_src=T_src, d_ff=d_ff, cache=True).total
        # Without the cache the step runs the decoder again on the whole prefix, over the encoder output
        # computed once before the first step (the encoder is in no step's count, cached or not).
        memory = model.encoder(source, causal=False)[0]
        uncached = _multiplications(lambda: model.lm_head(model.decoder(prefix, causal=True, memory=memory)[0]))  # noqa: B023
        step = generation_step_cost(t + 1, d, layers, vocab, T_src=T_src, d_ff=d_ff)
        assert uncached == step.total and step.encoder == 0
        assert _multiplications(lambda: model(source, prefix)) == step.total + expected.encoder  # noqa: B023


def test_decoder_only_prompt_then_cached_steps():
    P, d, layers, vocab = 5, 16, 2, 13
    model = _model("decoder", "rope", d=d, layers=layers, vocab=vocab)
    prompt = torch.randint(0, vocab, (1, P))
    assert _multiplications(lambda: model(prompt)) == teacher_forced_cost(P, d, layers, vocab).total
    decoder = IncrementalDecoder(model)
    whole_prompt = generation_step_cost(P, d, layers, vocab, cache=True, new=P).total
    assert whole_prompt == teacher_forced_cost(P, d, layers, vocab).total
    assert _multiplications(lambda: decoder.step(prompt)) == whole_prompt
    for T in range(P + 1, P + 4):
        counted = _multiplications(lambda: decoder.step(prompt[:, :1]))
        assert counted == generation_step_cost(T, d, layers, vocab, cache=True).total
    assert teacher_forced_cost(P, d, layers, vocab).encoder == 0


def test_cached_step_by_hand():
    """One new position, T keys, T_src source positions, per layer: 4d² + 2Td (self), 2d² + 2·T_src·d
    (cross), 8d² (feed-forward d → 4d → d); logits d·vocab."""
    T, T_src, d, layers, vocab = 9, 4, 8, 2, 11
    step = generation_step_cost(T, d, layers, vocab, T_src=T_src, cache=True)
    per_layer = 4 * d * d + 2 * T * d + 2 * d * d + 2 * T_src * d + 8 * d * d
    assert step == PassCost(0, layers * per_layer, d * vocab)
    assert step.total == layers * per_layer + d * vocab
    # Summed over a whole output, cached generation does the lower triangle of the teacher-forced
    # self-attention scores (Σ 2·t·d) where the dense training pass computes the whole square (2·T²·d).
    n = 6
    cached = sum(generation_step_cost(t, d, layers, vocab, cache=True).decoder for t in range(1, n + 1))
    dense = teacher_forced_cost(n, d, layers, vocab).decoder
    assert dense - cached == layers * (2 * n * n * d - n * (n + 1) * d)


def test_generation_step_cost_checks_new():
    with pytest.raises(ValueError):
        generation_step_cost(3, 8, 1, 5, cache=True, new=4)
    with pytest.raises(ValueError):
        generation_step_cost(3, 8, 1, 5, cache=True, new=0)
