"""A trained (or seeded) transformer's attention on one input, every block, layer and head, as numpy
arrays: one forward pass under a chosen mask, read from the model's trace.  The attention and positions
lessons draw these maps."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..model.transformer import Transformer
from ..training.tasks import EOS, PAD, Task

__all__ = ["MASKS", "AttentionBlock", "AttentionView", "compute_view"]

MASKS = ("none", "causal", "padding")


@dataclass
class AttentionBlock:
    """One kind of attention in the model, every layer and head, as numpy arrays."""

    title: str
    query_tokens: list[str]
    key_tokens: list[str]
    weights: np.ndarray  # (layers, heads, T_q, T_k)
    raw_scores: np.ndarray  # QKᵀ
    scaled_scores: np.ndarray  # ÷√d (+ positional bias)
    masked_scores: np.ndarray  # with -inf where masked


@dataclass
class AttentionView:
    blocks: list[AttentionBlock]
    input_tokens: list[str]
    output_tokens: list[str]  # the model's answer (predicted tokens), shown under the figures
    output_title: str
    head_dim: int


def _block(title, layer_traces, which, query_tokens, key_tokens) -> AttentionBlock:
    traces = [getattr(t, which) for t in layer_traces]

    def stack(field):
        return torch.stack([getattr(t, field)[0] for t in traces]).double().numpy()

    return AttentionBlock(title, query_tokens, key_tokens, stack("weights"), stack("raw_scores"),
                          stack("scaled_scores"), stack("masked_scores"))


def _run(model: Transformer, ids, causal: bool, valid, decoder_ids=None, decoder_valid=None):
    with torch.no_grad():
        if decoder_ids is None:
            return model(ids, causal=causal, valid=valid)
        return model(ids, decoder_ids, causal=causal, valid=valid, target_valid=decoder_valid)


def compute_view(model: Transformer, task: Task, tokens: list[str], mask: str, padded_length: int) -> AttentionView:
    """Run `model` on `tokens` under `mask` ("none", "causal" or "padding") and collect attention.

    "padding" appends <pad> tokens up to `padded_length` and hides them with a key-padding mask.
    For decoder-only models "none" removes the causal mask they were trained with; for
    encoder–decoder models the mask choice applies to the decoder's self-attention, and the
    decoder runs on the answer the model generates under that same mask.
    """
    if mask not in MASKS:
        raise ValueError(f"mask must be one of {MASKS}")
    arch = model.config.architecture
    words = list(tokens)
    if mask == "padding":
        words += [PAD] * max(0, padded_length - len(words))
    ids = torch.tensor([task.encode(words)], dtype=torch.long)
    valid = torch.tensor([[w != PAD for w in words]]) if mask == "padding" else None
    causal = {"none": False, "causal": True, "padding": model.config.causal}[mask]  # padding: the model's own rule
    head_dim = model.config.d_model // model.config.n_heads
    if arch == "encoder-decoder":
        bos, eos = task.index["<s>"], task.index[EOS]
        # Greedy decoding under the chosen mask, kept up to and including the first </s>.
        generated = model.generate(ids, len(tokens) + 1, bos, valid=valid, causal=causal)[0][0].tolist()
        if eos in generated:
            generated = generated[: generated.index(eos) + 1]
        out = torch.tensor([[bos, *generated]])
        logits, trace = _run(model, ids, causal, valid, out[:, :-1])
        decoder_tokens = task.decode(out[0, :-1])
        answer = task.decode(out[0, 1:])
        blocks = [
            _block("Encoder self-attention", trace.encoder_layers, "self_attention", words, words),
            _block("Decoder self-attention", trace.decoder_layers, "self_attention", decoder_tokens, decoder_tokens),
            _block("Cross-attention (decoder → encoder)", trace.decoder_layers, "cross_attention",
                   decoder_tokens, words),
        ]
        return AttentionView(blocks, words, answer, "Generated answer (greedy, one token at a time)", head_dim)
    logits, trace = _run(model, ids, causal, valid)
    predicted = task.decode(logits[0].argmax(-1))
    layers = trace.encoder_layers or trace.decoder_layers
    title = "Self-attention" + (" (causal)" if causal else "")
    block = _block(title, layers, "self_attention", words, words)
    return AttentionView([block], words, predicted, "Predicted token at each position", head_dim)
