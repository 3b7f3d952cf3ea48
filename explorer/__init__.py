"""Attention Explorer's library: models, encodings, analyses and figure builders.

Pure Python + torch + numpy; only `explorer.ui` imports streamlit.  The names below are the public
API for notebook users (see the README, "Use it from Python").
"""

from .attention import (
    AttentionTrace,
    MultiHeadAttention,
    attention_pipeline,
    causal_mask,
    combine_masks,
    key_padding_mask,
    scaled_dot_product_attention,
)
from .cost import (
    Cost,
    attention_cost,
    conv1d_cost,
    count_parameters,
    decoder_layer_cost,
    encoder_layer_cost,
    ffn_cost,
    recurrent_cost,
)
from .gradients import build_sequence_model, dependency_matrix, input_gradient_norms, random_sequence
from .lookup import soft_lookup
from .positional import (
    AbsolutePositionalEncoding,
    RotaryEmbedding,
    T5RelativeBias,
    alibi_bias,
    alibi_slopes,
    index_encoding,
    rope_angles,
    sinusoidal_encoding,
    sinusoidal_wavelengths,
    t5_relative_buckets,
)
from .rnn import RecurrentNet, RecurrentTrace
from .transformer import DecoderLayer, EncoderLayer, ModelTrace, Transformer, TransformerConfig

__all__ = [
    "AbsolutePositionalEncoding",
    "AttentionTrace",
    "Cost",
    "DecoderLayer",
    "EncoderLayer",
    "ModelTrace",
    "MultiHeadAttention",
    "RecurrentNet",
    "RecurrentTrace",
    "RotaryEmbedding",
    "T5RelativeBias",
    "Transformer",
    "TransformerConfig",
    "alibi_bias",
    "alibi_slopes",
    "attention_cost",
    "attention_pipeline",
    "build_sequence_model",
    "causal_mask",
    "combine_masks",
    "conv1d_cost",
    "count_parameters",
    "decoder_layer_cost",
    "dependency_matrix",
    "encoder_layer_cost",
    "ffn_cost",
    "index_encoding",
    "input_gradient_norms",
    "key_padding_mask",
    "random_sequence",
    "recurrent_cost",
    "rope_angles",
    "scaled_dot_product_attention",
    "sinusoidal_encoding",
    "sinusoidal_wavelengths",
    "soft_lookup",
    "t5_relative_buckets",
]
