"""Counting a model's parameters (any torch module: transformers, recurrent networks, the cost page's stacks),
also of models too large to allocate (built under `explorer.model.building.shapes_only`)."""

from __future__ import annotations

from torch import nn

__all__ = ["count_parameters"]


def count_parameters(module: nn.Module) -> int:
    """Number of scalars in the module's parameters (trainable or not)."""
    return sum(p.numel() for p in module.parameters())
