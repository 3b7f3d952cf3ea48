"""What a forward pass computed besides its output, for the pages to draw: returned, never stored.

Every tensor here is the forward pass's own (a reference, not a copy or a re-computation).  Read in
the order the data flows through a stack:

    EmbeddingTrace    token embedding (× √d if scaled) + position vector (+ segment) → the stack's input
    LayerTrace        per layer, per sub-layer a SublayerTrace (what entered, LayerNorm, the sub-layer's
                      output, the residual sum) around an AttentionTrace or a FeedForwardTrace
    ModelTrace        all of it, per stack, and each stack's output (after its final LayerNorm)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from .attention import AttentionTrace

__all__ = ["EmbeddingTrace", "FeedForwardTrace", "LayerTrace", "ModelTrace", "SublayerTrace"]


@dataclass
class EmbeddingTrace:
    """How a stack's input was made: token rows plus position vectors (plus BERT's segments, then its LayerNorm).

    token:      (B, T, d) the token embedding rows, as added: × √d_model where the config scales them
    position:   (T, d) the absolute position vectors added (all zero for relative encodings: RoPE, ALiBi, T5)
    token_type: (B, T, d) BERT's segment embeddings, or None
    sum:        (B, T, d) token + position (+ token_type)
    output:     (B, T, d) what layer 0 reads: `sum` itself, or LayerNorm(sum) where the config has embedding_norm
    """

    token: torch.Tensor
    position: torch.Tensor
    token_type: torch.Tensor | None
    sum: torch.Tensor
    output: torch.Tensor


@dataclass
class FeedForwardTrace:
    """What the position-wise feed-forward network computed: d → d_ff → activation → d."""

    hidden_pre: torch.Tensor  # (B, T, d_ff) x W₁ᵀ + b₁, before the activation
    hidden: torch.Tensor  # (B, T, d_ff) after ReLU (or GELU)
    output: torch.Tensor  # (B, T, d) hidden W₂ᵀ + b₂


@dataclass
class SublayerTrace:
    """One sub-layer (attention or feed-forward) with its residual connection and LayerNorm, in the
    order they ran:

        pre-norm   input → normed_input = LN(input) → output = F(normed_input) → residual_sum = input + output
        post-norm  input → output = F(input) → residual_sum = input + output → normed_sum = LN(residual_sum)

    normed_input is None unless pre-norm, normed_sum None unless post-norm (norm="none": both None).
    Without residual connections residual_sum is the output itself.  `result` is what leaves.
    `inner` is what the sub-layer returned besides its output: an AttentionTrace or a FeedForwardTrace.
    """

    input: torch.Tensor  # (B, T, d) the residual stream entering
    normed_input: torch.Tensor | None  # (B, T, d) pre-norm: what the sub-layer read
    output: torch.Tensor  # (B, T, d) the sub-layer's output F(·)
    residual_sum: torch.Tensor  # (B, T, d) input + output
    normed_sum: torch.Tensor | None  # (B, T, d) post-norm: LN(input + output)
    inner: AttentionTrace | FeedForwardTrace | None = None

    @property
    def result(self) -> torch.Tensor:
        """What the next sub-layer (or layer) reads: the normed sum (post-norm), else the sum."""
        return self.residual_sum if self.normed_sum is None else self.normed_sum


@dataclass
class LayerTrace:
    """What one layer computed: attention stages per head, shaped (B, heads, T_q, T_k), and each
    sub-layer around its residual connection and LayerNorm (None where a caller built the trace by hand)."""

    self_attention: AttentionTrace
    cross_attention: AttentionTrace | None
    hidden: torch.Tensor  # (B, T, d_model), the layer's output
    attention_sublayer: SublayerTrace | None = None  # self-attention, its residual and LayerNorm
    cross_sublayer: SublayerTrace | None = None  # cross-attention (DecoderLayer only)
    ffn_sublayer: SublayerTrace | None = None  # the feed-forward network, its residual and LayerNorm

    @property
    def ffn(self) -> FeedForwardTrace | None:
        """The feed-forward network's hidden activations and output."""
        return None if self.ffn_sublayer is None else self.ffn_sublayer.inner


@dataclass
class ModelTrace:
    """Everything a forward pass computed besides the logits.

    *_embedding: how each stack's input was made (EmbeddingTrace); *_input: that input (B, T, d);
    *_output: the stack's output (B, T, d), after its final LayerNorm (pre-norm) — what the output
    layer (or, for the encoder of an encoder–decoder, cross-attention) reads.
    """

    encoder_embedding: EmbeddingTrace | None = None
    decoder_embedding: EmbeddingTrace | None = None
    encoder_layers: list[LayerTrace] = field(default_factory=list)
    decoder_layers: list[LayerTrace] = field(default_factory=list)
    encoder_output: torch.Tensor | None = None
    decoder_output: torch.Tensor | None = None

    @property
    def encoder_input(self) -> torch.Tensor | None:
        """Embeddings + absolute positions fed to the encoder's layer 0, (B, T, d)."""
        return None if self.encoder_embedding is None else self.encoder_embedding.output

    @property
    def decoder_input(self) -> torch.Tensor | None:
        """The same for the decoder (decoder-only models: their one stack)."""
        return None if self.decoder_embedding is None else self.decoder_embedding.output

    @property
    def layers(self) -> list[LayerTrace]:
        """The stack that produces the logits (the decoder's if there is one)."""
        return self.decoder_layers or self.encoder_layers
