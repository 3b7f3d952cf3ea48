"""Attention Explorer's library, in layers that import one way only:

    model      attention, positional encodings, the transformer, recurrent networks
    training   tasks, the shipped models (loading, cards, evaluation), the training command
    analysis   lookup, gradients, back-propagation through time, dependency, depth, cost, timing,
               sampling the next token, word embeddings
    kit        what a lesson declares itself with: LessonSpec, settings as controls, claims (no Streamlit)
    figures    Plotly/Altair builders: handed arrays, they return figures (import no other layer)
    serve      the lesson runtime and its Streamlit adapter (each lesson's page script uses it): URL-bound
               controls, presentation mode, lesson steps, downloads, the page catalog (home + the registry)
    lessons    one folder per lesson (its settings, views, claims, figures, page, prose and steps),
               found by the registry explorer/lessons/__init__.py; no lesson imports another
    caching    the one cache mechanism, for every layer (the runtime lists and budgets the caches)
model ← training ← analysis ← kit ← lessons; tests/system/test_layers.py keeps it so.

The names below are the public API for notebook users (see the README, "Use it from Python").  They
are imported on first use (PEP 562), so that `explorer.serve` loads without torch: the app's home page
renders without waiting for torch's import, which happens in the background (explorer/serve/startup.py).
"""

import importlib

# name -> the module that defines it
_PUBLIC = {
    "AbsolutePositionalEncoding": "model.positional",
    "AttentionSinks": "analysis.encoders",
    "AttentionShape": "analysis.memory",
    "AttentionTrace": "model.attention",
    "BlockTrace": "analysis.block",
    "Corpus": "training.sentences",
    "Cost": "analysis.cost",
    "DecodeStep": "analysis.decoding",
    "DecoderLayer": "model.transformer",
    "EncoderLayer": "model.transformer",
    "IncrementalDecoder": "model.generation",
    "ModelTrace": "model.trace",
    "MultiHeadAttention": "model.attention",
    "PUBLISHED_SHAPES": "analysis.memory",
    "PassCost": "analysis.cost",
    "PoolingScores": "analysis.encoders",
    "RecurrentNet": "model.rnn",
    "RecurrentSeq2Seq": "model.seq2seq",
    "RecurrentTrace": "model.rnn",
    "RotaryEmbedding": "model.positional",
    "T5RelativeBias": "model.positional",
    "REVERSAL_MODELS": "analysis.length",
    "TensorMemory": "analysis.memory",
    "TiledTrace": "model.tiled",
    "Transformer": "model.transformer",
    "TransformerConfig": "model.transformer",
    "accuracy_by_length": "analysis.length",
    "alibi_bias": "model.positional",
    "attention_sinks": "analysis.encoders",
    "alibi_slopes": "model.positional",
    "attention_cost": "analysis.cost",
    "attention_pipeline": "model.attention",
    "attention_scores_bytes": "analysis.memory",
    "block_trace": "analysis.block",
    "block_trace_of": "analysis.block",
    "build_sequence_model": "analysis.gradients",
    "cache_setup_cost": "analysis.cost",
    "causal_mask": "model.attention",
    "combine_masks": "model.attention",
    "conv1d_cost": "analysis.cost",
    "cosine_matrix": "training.sentences",
    "count_parameters": "model.parameters",
    "decode_steps": "analysis.decoding",
    "decoder_layer_cost": "analysis.cost",
    "dependency_matrix": "analysis.dependency",
    "dependency_path_lengths": "analysis.dependency",
    "encoder_layer_cost": "analysis.cost",
    "ffn_cost": "analysis.cost",
    "generation_step_cost": "analysis.cost",
    "index_encoding": "model.positional",
    "input_gradient_norms": "analysis.gradients",
    "key_padding_mask": "model.attention",
    "pooling_report": "analysis.encoders",
    "load_corpus": "training.sentences",
    "kv_cache_bytes": "analysis.memory",
    "load_minilm": "training.minilm",
    "load_model": "training.pretrained",
    "measure_tensor_memory": "analysis.memory",
    "random_sequence": "analysis.gradients",
    "recurrent_cost": "analysis.cost",
    "rope_angles": "model.positional",
    "scaled_dot_product_attention": "model.attention",
    "seeded": "model.building",
    "sinusoidal_encoding": "model.positional",
    "sinusoidal_wavelengths": "model.positional",
    "sliding_window_mask": "model.attention",
    "sliding_window_path_length": "analysis.memory",
    "soft_lookup": "analysis.lookup",
    "t5_relative_buckets": "model.positional",
    "teacher_forced_cost": "analysis.cost",
    "tiled_attention": "model.tiled",
    "train_live": "training.live",
    "word_overlap_search": "training.sentences",
    "SampledRun": "analysis.sampling",
    "SamplingStages": "analysis.sampling",
    "WordMap": "analysis.embeddings",
    "generate_sampled": "analysis.sampling",
    "greedy": "analysis.sampling",
    "nearest_pieces": "analysis.embeddings",
    "project_words": "analysis.embeddings",
    "sample": "analysis.sampling",
    "sampling_stages": "analysis.sampling",
    "token_embeddings": "analysis.embeddings",
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


__all__ = sorted(_PUBLIC)
