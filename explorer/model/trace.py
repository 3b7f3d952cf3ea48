"""What a forward pass computed besides its output, for the pages to draw: returned, never stored."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .attention import AttentionTrace

__all__ = ["LayerTrace", "ModelTrace"]


@dataclass
class LayerTrace:
    """What one layer computed: attention stages per head, shaped (B, heads, T_q, T_k)."""

    self_attention: AttentionTrace
    cross_attention: AttentionTrace | None
    hidden: torch.Tensor  # (B, T, d_model), the layer's output


@dataclass
class ModelTrace:
    """Everything a forward pass computed besides the logits."""

    encoder_input: torch.Tensor | None = None  # embeddings + absolute positions fed to layer 0
    decoder_input: torch.Tensor | None = None
    encoder_layers: list[LayerTrace] = field(default_factory=list)
    decoder_layers: list[LayerTrace] = field(default_factory=list)

    @property
    def layers(self) -> list[LayerTrace]:
        """The stack that produces the logits (the decoder's if there is one)."""
        return self.decoder_layers or self.encoder_layers
