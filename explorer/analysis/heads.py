"""Which heads a shipped model relies on: its held-out accuracy with one attention head silenced.

To silence head h of a layer is to set its output (its head_dim slice of the vector that goes into
the layer's output projection) to zero, so nothing it reads reaches the rest of the model; the
projection's bias stays.  This is done on a copy whose projection has the head's columns zeroed
(the training code's `head_ablation`, which writes the card's numbers, does the same), so the
shipped model, shared by every session, is never touched.  Accuracy is the training code's
(`evaluate`) on the task's fixed held-out set: the same sentences, the same number, every time.
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from ..caching import bounded_cache
from ..training.pretrained import evaluate, load_model

__all__ = ["accuracy_without", "self_attention_layers", "silenced"]


def self_attention_layers(model: nn.Module) -> list[nn.Module]:
    """The MultiHeadAttention of every layer of an encoder-only or decoder-only transformer."""
    if model.config.architecture == "encoder-decoder":
        raise ValueError("only encoder-only and decoder-only models: an encoder–decoder has three kinds of heads")
    stack = model.encoder if model.encoder is not None else model.decoder
    return [layer.self_attn for layer in stack.layers]


def silenced(model: nn.Module, layer: int, head: int) -> nn.Module:
    """A copy of `model` in which self-attention head `head` of layer `layer` (both from 0) is silent:
    the output projection's columns that read that head are zero.  `model` is left as it was."""
    attention = self_attention_layers(model)[layer]
    if not 0 <= head < attention.n_heads:
        raise ValueError(f"head must be in 0…{attention.n_heads - 1}, got {head}")
    quiet = copy.deepcopy(model)
    columns = slice(head * attention.head_dim, (head + 1) * attention.head_dim)
    with torch.no_grad():
        self_attention_layers(quiet)[layer].out_proj.weight[:, columns] = 0.0
    return quiet


@bounded_cache(64, max_bytes=100_000)  # a float each
def accuracy_without(name: str, layer: int | None = None, head: int | None = None) -> float:
    """Held-out accuracy of the shipped model `name` with head (layer, head) silenced (from 0); with
    layer and head None, of the model as shipped."""
    loaded = load_model(name)
    model = loaded.model if layer is None else silenced(loaded.model, layer, head)
    return float(evaluate(model, loaded.task)["accuracy"])
