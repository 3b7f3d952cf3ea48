"""A small, readable transformer: encoder-only, decoder-only or encoder–decoder from one config.

`forward` returns the logits together with a trace of everything the lesson pages draw: per layer
and head the self- and cross-attention scores and weights, and every layer's hidden states.
Nothing is stored on the module, so one cached model can serve every user at once.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import torch
from torch import nn

from .attention import AttentionTrace, MultiHeadAttention, causal_mask, combine_masks, key_padding_mask
from .positional import (
    ABSOLUTE_ENCODINGS,
    ENCODINGS,
    AbsolutePositionalEncoding,
    RotaryEmbedding,
    T5RelativeBias,
    alibi_bias,
)

__all__ = [
    "ARCHITECTURES",
    "DecoderLayer",
    "EncoderLayer",
    "FeedForward",
    "LayerTrace",
    "ModelTrace",
    "Transformer",
    "TransformerConfig",
]

ARCHITECTURES = ("encoder", "decoder", "encoder-decoder")


@dataclass(frozen=True)
class TransformerConfig:
    """Everything that defines a model's shape; saved as JSON beside its weights."""

    vocab_size: int = 32
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    architecture: str = "encoder"
    encoding: str = "sinusoidal"
    norm: str = "post"  # "post" (the paper: Add & Norm after each block) or "pre"
    residual: bool = True
    d_ff: int | None = None  # None means 4·d_model, as in the paper
    max_len: int = 64
    target_vocab_size: int | None = None  # encoder–decoder output vocabulary; None = vocab_size
    base: float = 10000.0  # sinusoidal / RoPE base

    def __post_init__(self):
        problems = []
        if self.architecture not in ARCHITECTURES:
            problems.append(f"architecture must be one of {ARCHITECTURES}")
        if self.encoding not in ENCODINGS:
            problems.append(f"encoding must be one of {ENCODINGS}")
        if self.norm not in ("post", "pre"):
            problems.append("norm must be 'post' or 'pre'")
        if min(self.vocab_size, self.d_model, self.n_heads, self.n_layers, self.max_len) < 1:
            problems.append("sizes must be positive")
        if self.d_ff is not None and self.d_ff < 1:
            problems.append("d_ff must be positive (or None for 4·d_model)")
        if self.target_vocab_size is not None and self.target_vocab_size < 1:
            problems.append("target_vocab_size must be positive (or None for vocab_size)")
        if not self.base > 0:
            problems.append("base must be positive")
        elif self.d_model % self.n_heads:
            problems.append(f"d_model={self.d_model} must be divisible by n_heads={self.n_heads}")
        elif self.encoding == "rope" and (self.d_model // self.n_heads) % 2:
            problems.append("RoPE needs an even head dimension (d_model / n_heads)")
        if problems:
            raise ValueError("invalid TransformerConfig: " + "; ".join(problems))

    @property
    def ff_dim(self) -> int:
        return 4 * self.d_model if self.d_ff is None else self.d_ff

    @property
    def output_vocab_size(self) -> int:
        return self.vocab_size if self.target_vocab_size is None else self.target_vocab_size

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TransformerConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown TransformerConfig fields: {sorted(unknown)}")
        return cls(**data)


class FeedForward(nn.Module):
    """Position-wise two-layer network: expand to d_ff, ReLU, project back to d_model."""

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear2(torch.relu(self.linear1(x)))


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


class _Sublayer(nn.Module):
    """One "Add & Norm" around a sublayer, in post-norm or pre-norm placement, residual optional."""

    def __init__(self, d_model: int, norm: str, residual: bool):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.pre_norm = norm == "pre"
        self.residual = residual

    def forward(self, x: torch.Tensor, sublayer) -> tuple[torch.Tensor, object]:
        """sublayer(h) returns (value, extra); the extra (an attention trace) is passed through."""
        h = self.norm(x) if self.pre_norm else x
        value, extra = sublayer(h)
        out = x + value if self.residual else value
        return (out if self.pre_norm else self.norm(out)), extra


class EncoderLayer(nn.Module):
    """Self-attention then feed-forward, each wrapped in Add & Norm.

    Unmasked in an encoder; give it a causal mask and it is a decoder-only ("GPT-style") layer.
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, norm: str = "post", residual: bool = True):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads)
        self.ffn = FeedForward(d_model, d_ff)
        self.attn_block = _Sublayer(d_model, norm, residual)
        self.ffn_block = _Sublayer(d_model, norm, residual)

    def forward(self, x, mask=None, bias=None, rotary=None) -> tuple[torch.Tensor, LayerTrace]:
        x, attn = self.attn_block(x, lambda h: self.self_attn(h, h, mask=mask, bias=bias, rotary=rotary))
        x, _ = self.ffn_block(x, lambda h: (self.ffn(h), None))
        return x, LayerTrace(self_attention=attn, cross_attention=None, hidden=x)


class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention to the encoder output, then feed-forward."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, norm: str = "post", residual: bool = True):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads)
        self.cross_attn = MultiHeadAttention(d_model, n_heads)
        self.ffn = FeedForward(d_model, d_ff)
        self.self_block = _Sublayer(d_model, norm, residual)
        self.cross_block = _Sublayer(d_model, norm, residual)
        self.ffn_block = _Sublayer(d_model, norm, residual)

    def forward(
        self, x, memory, self_mask=None, memory_mask=None, bias=None, rotary=None
    ) -> tuple[torch.Tensor, LayerTrace]:
        x, self_attn = self.self_block(
            x, lambda h: self.self_attn(h, h, mask=self_mask, bias=bias, rotary=rotary)
        )
        # Queries come from the decoder, keys and values from the encoder output ("memory").
        x, cross_attn = self.cross_block(x, lambda h: self.cross_attn(h, memory, mask=memory_mask))
        x, _ = self.ffn_block(x, lambda h: (self.ffn(h), None))
        return x, LayerTrace(self_attention=self_attn, cross_attention=cross_attn, hidden=x)


class _Stack(nn.Module):
    """Token embedding, positional information, N layers and (pre-norm only) a final LayerNorm."""

    def __init__(self, config: TransformerConfig, vocab_size: int, layer_cls, bidirectional: bool):
        super().__init__()
        c = config
        self.config = c
        self.embed = nn.Embedding(vocab_size, c.d_model)
        self.position = AbsolutePositionalEncoding(
            c.encoding if c.encoding in ABSOLUTE_ENCODINGS else "none", c.max_len, c.d_model, c.base
        )
        self.layers = nn.ModuleList(
            layer_cls(c.d_model, c.n_heads, c.ff_dim, c.norm, c.residual) for _ in range(c.n_layers)
        )
        self.final_norm = nn.LayerNorm(c.d_model) if c.norm == "pre" else nn.Identity()
        self.t5_bias = T5RelativeBias(c.n_heads, bidirectional) if c.encoding == "t5" else None
        self.rotary = RotaryEmbedding(c.d_model // c.n_heads, c.base) if c.encoding == "rope" else None

    def embed_tokens(self, tokens: torch.Tensor) -> torch.Tensor:
        T = tokens.shape[1]
        if self.config.max_len < T:
            raise ValueError(f"sequence length {T} exceeds the model's max_len {self.config.max_len}")
        # Scaled by √d as in the paper so the embedding is not drowned by the position vector.
        return self.embed(tokens) * math.sqrt(self.config.d_model) + self.position(T)

    def score_bias(self, T: int, device) -> torch.Tensor | None:
        if self.config.encoding == "alibi":
            return torch.from_numpy(alibi_bias(self.config.n_heads, T)).float().to(device)[None]
        if self.t5_bias is not None:
            return self.t5_bias(T)
        return None


class Transformer(nn.Module):
    """Encoder-only, decoder-only or encoder–decoder transformer built from a TransformerConfig.

    forward(tokens)            — encoder-only / decoder-only: logits for every position.
    forward(source, target)    — encoder–decoder: logits for every target position (teacher forcing).
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.config = config
        arch = config.architecture
        self.encoder = (
            _Stack(config, config.vocab_size, EncoderLayer, bidirectional=True)
            if arch in ("encoder", "encoder-decoder")
            else None
        )
        self.decoder = (
            _Stack(config, config.output_vocab_size if arch == "encoder-decoder" else config.vocab_size,
                   DecoderLayer if arch == "encoder-decoder" else EncoderLayer, bidirectional=False)
            if arch in ("decoder", "encoder-decoder")
            else None
        )
        out_vocab = config.output_vocab_size if arch == "encoder-decoder" else config.vocab_size
        self.lm_head = nn.Linear(config.d_model, out_vocab)

    def _run_self_stack(self, stack: _Stack, tokens, causal: bool, valid, layer_traces: list):
        x = stack.embed_tokens(tokens)
        T = tokens.shape[1]
        mask = combine_masks(
            causal_mask(T, tokens.device) if causal else None,
            key_padding_mask(valid) if valid is not None else None,
        )
        bias = stack.score_bias(T, tokens.device)
        stack_input = x
        for layer in stack.layers:
            x, trace = layer(x, mask=mask, bias=bias, rotary=stack.rotary)
            layer_traces.append(trace)
        return stack.final_norm(x), stack_input

    def forward(
        self,
        tokens: torch.Tensor,
        target: torch.Tensor | None = None,
        *,
        causal: bool | None = None,
        valid: torch.Tensor | None = None,
        target_valid: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, ModelTrace]:
        """Run the model and return (logits, trace).

        tokens: (B, T) input ids.  target: (B, T_out) decoder input ids (encoder–decoder only).
        causal: mask for the self-attention of the stack that is not the encoder of an
            encoder–decoder; defaults to the architecture's own (True for decoders).  Encoder-only
            models accept causal=True too, so a page can show what masking does to them.
        valid / target_valid: (B, T) booleans, False marks padding keys to ignore.
        """
        arch = self.config.architecture
        trace = ModelTrace()
        if arch == "encoder":
            x, trace.encoder_input = self._run_self_stack(
                self.encoder, tokens, bool(causal), valid, trace.encoder_layers
            )
            return self.lm_head(x), trace
        if arch == "decoder":
            x, trace.decoder_input = self._run_self_stack(
                self.decoder, tokens, True if causal is None else causal, valid, trace.decoder_layers
            )
            return self.lm_head(x), trace
        if target is None:
            raise ValueError("an encoder–decoder model needs a target sequence (teacher forcing)")
        memory, trace.encoder_input = self._run_self_stack(
            self.encoder, tokens, False, valid, trace.encoder_layers
        )
        dec = self.decoder
        y = trace.decoder_input = dec.embed_tokens(target)
        T_out = target.shape[1]
        self_mask = combine_masks(
            causal_mask(T_out, target.device) if (True if causal is None else causal) else None,
            key_padding_mask(target_valid) if target_valid is not None else None,
        )
        memory_mask = key_padding_mask(valid) if valid is not None else None
        bias = dec.score_bias(T_out, target.device)
        for layer in dec.layers:
            y, layer_trace = layer(y, memory, self_mask=self_mask, memory_mask=memory_mask,
                                   bias=bias, rotary=dec.rotary)
            trace.decoder_layers.append(layer_trace)
        return self.lm_head(dec.final_norm(y)), trace

    @torch.no_grad()
    def generate(
        self, tokens: torch.Tensor, n_steps: int, start_token: int, *, valid: torch.Tensor | None = None,
        causal: bool | None = None,
    ) -> tuple[torch.Tensor, ModelTrace]:
        """Greedy autoregressive decoding: feed each prediction back in as the next input.

        Encoder–decoder: `tokens` is the source and decoding starts from `start_token`.
        Decoder-only: `tokens` is the prompt to continue.  `valid` and `causal` are passed to every
        step's forward (source padding; the self-attention mask).  Returns the generated ids
        (B, n_steps) and the trace of the final step's forward pass.
        """
        arch = self.config.architecture
        if arch == "encoder":
            raise ValueError("an encoder-only model does not generate")
        out = torch.full((tokens.shape[0], 1), start_token, dtype=torch.long) if arch == "encoder-decoder" else tokens
        trace = ModelTrace()
        for _ in range(n_steps):
            if arch == "encoder-decoder":
                logits, trace = self(tokens, out, causal=causal, valid=valid)
            else:
                logits, trace = self(out, causal=causal, valid=valid)
            out = torch.cat([out, logits[:, -1:].argmax(-1)], dim=1)
        return out[:, out.shape[1] - n_steps:], trace
