"""Attention Explorer's library: models, encodings, analyses and figure builders.

Pure Python + torch + numpy; only `explorer.ui` imports streamlit.  The names below are the public
API for notebook users (see the README, "Use it from Python").

They are imported on first use (PEP 562), so that `explorer.catalog` and `explorer.ui` load without
torch: the app's home page then renders without waiting for torch's import (about 1.2 s), which
happens in the background meanwhile (app.py).
"""

import importlib

_PUBLIC = {
    "AbsolutePositionalEncoding": "positional",
    "AttentionTrace": "attention",
    "Cost": "cost",
    "DecoderLayer": "transformer",
    "EncoderLayer": "transformer",
    "ModelTrace": "transformer",
    "MultiHeadAttention": "attention",
    "RecurrentNet": "rnn",
    "RecurrentTrace": "rnn",
    "RotaryEmbedding": "positional",
    "T5RelativeBias": "positional",
    "Transformer": "transformer",
    "TransformerConfig": "transformer",
    "alibi_bias": "positional",
    "alibi_slopes": "positional",
    "attention_cost": "cost",
    "attention_pipeline": "attention",
    "build_sequence_model": "gradients",
    "causal_mask": "attention",
    "combine_masks": "attention",
    "conv1d_cost": "cost",
    "count_parameters": "cost",
    "decoder_layer_cost": "cost",
    "dependency_matrix": "gradients",
    "encoder_layer_cost": "cost",
    "ffn_cost": "cost",
    "index_encoding": "positional",
    "input_gradient_norms": "gradients",
    "key_padding_mask": "attention",
    "random_sequence": "gradients",
    "recurrent_cost": "cost",
    "rope_angles": "positional",
    "scaled_dot_product_attention": "attention",
    "sinusoidal_encoding": "positional",
    "sinusoidal_wavelengths": "positional",
    "soft_lookup": "lookup",
    "t5_relative_buckets": "positional",
}


def __getattr__(name: str):
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})


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
