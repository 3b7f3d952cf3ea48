"""explorer.model.generation: cached decoding against the full forward pass it must reproduce.

The reference is the model's own parallel forward over everything written so far (itself tested
against torch's Transformer layers in test_lib_transformer.py): the KV cache must give the same
tokens, the same logits (to 1e-5) and the same attention rows, for every positional encoding.

The cache is exact arithmetic; the last digits of float32 are not.  So the shipped models are checked
twice: a float64 copy (logits to 1e-5 absolute — in fact ~1e-13 — the algorithm), and as the app runs
them, in float32 (the same tokens, probabilities and attention to 1e-5; logits to LOGIT_ATOL_FLOAT32,
because a trained model's logits reach ±30 and the cached path sums in another order).
"""

import copy

import pytest
import torch

from explorer.model.generation import IncrementalDecoder
from explorer.model.positional import ENCODINGS
from explorer.model.transformer import Transformer, TransformerConfig
from explorer.training.pretrained import MODEL_SPECS, load_model
from explorer.training.tasks import BOS

TOLERANCE = 1e-5  # absolute: logits in float64; probabilities and attention weights in either precision
LOGIT_ATOL_FLOAT32 = 5e-5  # measured worst over 200 held-out sources per shipped model: 2.3e-5

SHIPPED = [s.name for s in MODEL_SPECS if s.kind == "transformer" and s.task != "coreference"]


def _random_model(architecture: str, encoding: str, norm: str = "pre", seed: int = 0) -> Transformer:
    torch.manual_seed(seed)
    config = TransformerConfig(vocab_size=13, d_model=16, n_heads=2, n_layers=2, architecture=architecture,
                               encoding=encoding, norm=norm, max_len=24)
    return Transformer(config).eval()


def _full_rows(model, source, decoder_input, valid=None):
    """Logits and trace of one parallel forward over the whole decoder input."""
    with torch.no_grad():
        if model.config.architecture == "encoder-decoder":
            return model(source, decoder_input, valid=valid)
        return model(decoder_input, valid=valid)


def _grown(valid, length):
    """A decoder-only prompt's padding mask, extended with real (True) generated positions."""
    if valid is None:
        return None
    return torch.cat([valid, torch.ones(valid.shape[0], length - valid.shape[1], dtype=torch.bool)], dim=1)


def _check_cache(model, source, n_steps, start, valid=None, logit_atol=TOLERANCE):
    """Cached and uncached generate agree; every cached step's logits and attention rows are the rows
    of the full forward pass over the same decoder input.  Returns the largest logit difference."""
    plain, _ = model.generate(source, n_steps, start, valid=valid)
    cached, last = model.generate(source, n_steps, start, valid=valid, cache=True)
    assert torch.equal(plain, cached)
    seq2seq = model.config.architecture == "encoder-decoder"
    prefix = torch.full((source.shape[0], 1), start) if seq2seq else source
    decoder_input = torch.cat([prefix, plain[:, :-1]], dim=1)
    full_valid = valid if seq2seq else _grown(valid, decoder_input.shape[1])
    full_logits, full = _full_rows(model, source, decoder_input, full_valid)
    decoder = IncrementalDecoder(model, source if seq2seq else None, valid=valid if seq2seq else None)
    first = prefix.shape[1]
    step_logits = [decoder.step(prefix, valid=None if seq2seq else valid)]
    step_logits += [decoder.step(decoder_input[:, t:t + 1]) for t in range(first, decoder_input.shape[1])]
    worst = 0.0
    for k, (logits, trace) in enumerate(step_logits):
        rows = slice(0, first) if k == 0 else slice(first + k - 1, first + k)
        torch.testing.assert_close(logits, full_logits[:, rows], atol=logit_atol, rtol=0)
        torch.testing.assert_close(torch.softmax(logits, -1), torch.softmax(full_logits[:, rows], -1),
                                   atol=TOLERANCE, rtol=0)
        worst = max(worst, float((logits - full_logits[:, rows]).abs().max()))
        for ours, theirs in zip(trace.decoder_layers, full.decoder_layers, strict=True):
            keys = rows.stop
            torch.testing.assert_close(ours.self_attention.weights, theirs.self_attention.weights[:, :, rows, :keys],
                                       atol=TOLERANCE, rtol=0)
            if seq2seq:
                torch.testing.assert_close(ours.cross_attention.weights, theirs.cross_attention.weights[:, :, rows],
                                           atol=TOLERANCE, rtol=0)
    # generate(cache=True) returns the last step's rows: one query against every key so far.
    assert last.decoder_layers[0].self_attention.weights.shape[2] == 1
    return worst


@pytest.mark.parametrize("precision", ["float64", "float32"])
@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_generator_gives_the_same_tokens_and_logits_with_the_cache(name, precision):
    loaded = load_model(name)
    task = loaded.task
    # A private float64 copy: the shared model is never changed.
    model = copy.deepcopy(loaded.model).double() if precision == "float64" else loaded.model
    atol = TOLERANCE if precision == "float64" else LOGIT_ATOL_FLOAT32
    batch = task.evaluation()
    if model.config.architecture == "encoder-decoder":
        source, valid = batch.inputs[:32], batch.valid[:32]  # padded sources of 2–10 letters
        worst = _check_cache(model, source, task.max_len, task.index[BOS], valid=valid, logit_atol=atol)
    else:
        length = min(12, task.max_len - 6)
        worst = _check_cache(model, batch.inputs[:32, :length], 6, None, logit_atol=atol)
    if precision == "float64":
        assert worst < 1e-9, "in float64 the cache reproduces the full pass to rounding"


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("architecture", ["encoder-decoder", "decoder"])
@pytest.mark.parametrize("norm", ["pre", "post"])
def test_random_models_with_every_encoding_decode_the_same_with_the_cache(encoding, architecture, norm):
    """The new position must get its own position: absolute table row, RoPE angle, ALiBi and T5 row."""
    model = _random_model(architecture, encoding, norm)
    source = torch.randint(0, 13, (4, 7), generator=torch.Generator().manual_seed(1))
    start = 1 if architecture == "encoder-decoder" else None
    _check_cache(model, source, 12, start)


@pytest.mark.parametrize("architecture", ["encoder-decoder", "decoder"])
def test_padding_in_the_source_or_prompt_is_hidden_the_same_way(architecture):
    model = _random_model(architecture, "rope")
    source = torch.randint(1, 13, (3, 6), generator=torch.Generator().manual_seed(2))
    valid = torch.tensor([[True] * 6, [True] * 4 + [False] * 2, [True] * 2 + [False] * 4])
    start = 1 if architecture == "encoder-decoder" else None
    _check_cache(model, source, 8, start, valid=valid)


def test_a_decoder_only_prompt_can_be_fed_whole_or_token_by_token():
    model = _random_model("decoder", "alibi")
    prompt = torch.randint(0, 13, (2, 6), generator=torch.Generator().manual_seed(3))
    whole = IncrementalDecoder(model)
    at_once, _ = whole.step(prompt)
    one_by_one = IncrementalDecoder(model)
    singly = torch.cat([one_by_one.step(prompt[:, t:t + 1])[0] for t in range(6)], dim=1)
    torch.testing.assert_close(at_once, singly, atol=TOLERANCE, rtol=0)


def test_the_cache_needs_the_causal_mask():
    model = _random_model("decoder", "sinusoidal")
    with pytest.raises(ValueError, match="causal mask"):
        model.generate(torch.zeros(1, 3, dtype=torch.long), 2, None, causal=False, cache=True)
    # Without the mask, earlier rows do change as the output grows: there is nothing to keep.
    sequence = torch.randint(0, 13, (1, 6), generator=torch.Generator().manual_seed(4))
    short, _ = model(sequence[:, :5], causal=False)
    long, _ = model(sequence, causal=False)
    assert (short - long[:, :5]).abs().max() > 1e-3


def test_generation_beyond_max_len_is_refused_both_ways():
    model = _random_model("encoder-decoder", "learned")
    source = torch.zeros(1, 3, dtype=torch.long)
    for cache in (False, True):
        with pytest.raises(ValueError, match="max_len"):
            model.generate(source, 30, 1, cache=cache)


def test_start_token_is_required_for_an_encoder_decoder():
    with pytest.raises(ValueError, match="start token"):
        _random_model("encoder-decoder", "none").generate(torch.zeros(1, 3, dtype=torch.long), 2, None)
    with pytest.raises(ValueError):
        IncrementalDecoder(_random_model("encoder-decoder", "none"))  # no source
    with pytest.raises(ValueError):
        IncrementalDecoder(_random_model("encoder", "none"), torch.zeros(1, 3, dtype=torch.long))


def test_cached_decoding_leaves_the_shared_model_as_it_was():
    model = _random_model("encoder-decoder", "t5")
    before = {name: tensor.clone() for name, tensor in model.state_dict().items()}
    attributes = {name: set(vars(module)) for name, module in model.named_modules()}
    model.generate(torch.randint(0, 13, (2, 5)), 6, 1, cache=True)
    assert {name: set(vars(module)) for name, module in model.named_modules()} == attributes
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, before[name]), name
