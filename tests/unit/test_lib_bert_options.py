"""The BERT options of explorer.model.transformer (GELU, token types, embedding LayerNorm, LayerNorm
ε, unscaled embeddings), each against a formula written out with torch's own functions, and the
defaults, which must leave the app's own models exactly as they were."""

import math

import pytest
import torch
import torch.nn.functional as F

from explorer.model.transformer import EncoderLayer, FeedForward, Stack, Transformer, TransformerConfig

BERT = dict(vocab_size=11, d_model=8, n_heads=2, n_layers=2, encoding="learned", norm="post", max_len=9,
            activation="gelu", token_types=2, embedding_norm=True, norm_eps=1e-12, scale_embeddings=False)


def test_the_defaults_are_the_papers_model():
    config = TransformerConfig()
    assert (config.activation, config.token_types, config.embedding_norm, config.norm_eps,
            config.scale_embeddings) == ("relu", 0, False, 1e-5, True)
    stack = Transformer(config).encoder
    assert stack.token_type is None and isinstance(stack.embed_norm, torch.nn.Identity)
    assert stack.layers[0].attn_norm.eps == 1e-5


def test_defaults_create_no_new_parameters():
    """With the options off no new module with parameters is created (and none draws random numbers),
    so a seeded model gets the same initial weights as before the options existed."""
    names = [name for name, _ in Transformer(TransformerConfig(architecture="encoder-decoder")).named_parameters()]
    assert not any("token_type" in n or "embed_norm" in n for n in names)


def test_gelu_feed_forward_is_the_exact_erf_gelu():
    ffn = FeedForward(6, 10, "gelu")
    x = torch.randn(2, 3, 6)
    h = ffn.linear1(x)
    expected = ffn.linear2(0.5 * h * (1 + torch.erf(h / math.sqrt(2))))
    torch.testing.assert_close(ffn(x), expected)
    relu = FeedForward(6, 10)
    torch.testing.assert_close(relu(x), relu.linear2(F.relu(relu.linear1(x))))


def test_bert_embeddings_are_words_plus_positions_plus_types_then_layernorm():
    config = TransformerConfig(**BERT)
    stack = Stack(config, config.vocab_size, EncoderLayer, bidirectional=True)
    with torch.no_grad():
        stack.embed_norm.weight.uniform_(0.5, 1.5)
        stack.embed_norm.bias.uniform_(-0.5, 0.5)
    tokens = torch.tensor([[3, 1, 4, 1, 5]])
    types = torch.tensor([[0, 0, 1, 1, 1]])
    summed = stack.embed.weight[tokens] + stack.position.table[:5] + stack.token_type.weight[types]
    expected = F.layer_norm(summed, (8,), stack.embed_norm.weight, stack.embed_norm.bias, eps=1e-12)
    torch.testing.assert_close(stack.embed_tokens(tokens, types), expected)
    # No token types given: every token is in segment 0.
    zeros = F.layer_norm(summed - stack.token_type.weight[types] + stack.token_type.weight[0], (8,),
                         stack.embed_norm.weight, stack.embed_norm.bias, eps=1e-12)
    torch.testing.assert_close(stack.embed_tokens(tokens), zeros)


def test_scale_embeddings_multiplies_by_root_d_only_when_asked():
    for scale in (True, False):
        config = TransformerConfig(vocab_size=7, d_model=16, n_heads=2, encoding="none", scale_embeddings=scale)
        stack = Transformer(config).encoder
        tokens = torch.tensor([[1, 2, 3]])
        factor = math.sqrt(16) if scale else 1.0
        torch.testing.assert_close(stack.embed_tokens(tokens), stack.embed.weight[tokens] * factor)


def test_norm_eps_reaches_every_layernorm():
    config = TransformerConfig(**{**BERT, "norm": "pre"})
    stack = Stack(config, config.vocab_size, EncoderLayer, bidirectional=True)
    norms = [m for m in stack.modules() if isinstance(m, torch.nn.LayerNorm)]
    assert len(norms) == 1 + 2 * 2 + 1  # embeddings, two per layer, the final pre-norm one
    assert {m.eps for m in norms} == {1e-12}


@pytest.mark.parametrize("bad", [dict(activation="swish"), dict(token_types=-1), dict(norm_eps=0.0)])
def test_config_rejects_bad_bert_options(bad):
    with pytest.raises(ValueError, match="invalid TransformerConfig"):
        TransformerConfig(**bad)


def test_bert_config_round_trips_through_dict():
    config = TransformerConfig(**BERT)
    assert TransformerConfig.from_dict(config.to_dict()) == config
