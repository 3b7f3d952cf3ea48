"""A small, readable transformer: encoder-only, decoder-only or encoder–decoder from one config.

Read it top-down, following one forward pass:

    Transformer.forward      picks the stacks the architecture has and ends in the output projection
    Stack.forward            token embedding (+ absolute positions), the mask, N layers, final LayerNorm
    EncoderLayer.forward     self-attention, then feed-forward: one `add_and_norm` line each
    DecoderLayer.forward     the same with cross-attention to the encoder's output in between
    Sublayers.add_and_norm   a sub-layer with its residual connection and LayerNorm (post, pre or none)
    FeedForward              expand, ReLU (or GELU), project back

Shapes: B batch, T sequence length, d d_model, heads × head_dim = d, d_ff the feed-forward width.
`forward` returns the logits together with a trace of everything the lesson pages draw
(explorer/model/trace.py): the token and position embeddings; per layer and head q, k, v, the
attention scores and weights, the heads concatenated and projected; per sub-layer what entered it,
its LayerNorm, its output and the residual sum; the feed-forward network's hidden activations; each
stack's output.  They are the tensors the forward pass computes anyway, kept by reference.  Nothing
is stored on the module, so one cached model can serve every user at once.  Greedy generation, with
or without a KV cache, is in explorer/model/generation.py.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch
from torch import nn

from .attention import KVCache, MultiHeadAttention, attention_mask
from .generation import generate
from .positional import (
    ABSOLUTE_ENCODINGS,
    ENCODINGS,
    AbsolutePositionalEncoding,
    RotaryEmbedding,
    T5RelativeBias,
    alibi_bias,
)
from .trace import EmbeddingTrace, FeedForwardTrace, LayerTrace, ModelTrace, SublayerTrace

__all__ = [
    "ARCHITECTURES",
    "NORM_PLACEMENTS",
    "DecoderLayer",
    "EncoderLayer",
    "FeedForward",
    "LayerTrace",
    "ModelTrace",
    "Stack",
    "Sublayers",
    "Transformer",
    "TransformerConfig",
    "is_causal",
]

ARCHITECTURES = ("encoder", "decoder", "encoder-decoder")
# Where a layer puts its LayerNorms: "post" (the paper: Add & Norm after each sublayer), "pre"
# (before each sublayer, GPT-2 onwards) or "none" (no LayerNorm at all, for the depth lesson).
NORM_PLACEMENTS = ("post", "pre", "none")
ACTIVATIONS = {"relu": torch.relu, "gelu": nn.functional.gelu}  # feed-forward: the paper's; BERT's (erf GELU)


def is_causal(architecture: str) -> bool:
    """The mask rule, decided here once: a decoder sees only what it has written so far (decoder-only,
    and the decoder of an encoder–decoder); an encoder-only model reads its whole input."""
    return architecture != "encoder"


@dataclass(frozen=True)
class TransformerConfig:
    """Everything that defines a model's shape; saved as JSON beside its weights.  The defaults are
    the paper's; the last five fields make BERT's encoder of it (see explorer/training/minilm.py)."""

    vocab_size: int = 32
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    architecture: str = "encoder"
    encoding: str = "sinusoidal"
    norm: str = "post"  # one of NORM_PLACEMENTS: "post" (the paper: Add & Norm after each block), "pre", "none"
    residual: bool = True
    d_ff: int | None = None  # None means 4·d_model, as in the paper
    max_len: int = 64
    target_vocab_size: int | None = None  # encoder–decoder output vocabulary; None = vocab_size
    base: float = 10000.0  # sinusoidal / RoPE base
    activation: str = "relu"  # the feed-forward non-linearity, a key of ACTIVATIONS
    token_types: int = 0  # BERT's segment embeddings (sentence A / B); 0 = none
    embedding_norm: bool = False  # a LayerNorm on embeddings + positions before layer 0 (BERT)
    norm_eps: float = 1e-5  # every LayerNorm's ε (BERT: 1e-12)
    scale_embeddings: bool = True  # token embeddings × √d_model (the paper); BERT adds them unscaled

    def __post_init__(self):
        problems = []
        if self.architecture not in ARCHITECTURES:
            problems.append(f"architecture must be one of {ARCHITECTURES}")
        if self.encoding not in ENCODINGS:
            problems.append(f"encoding must be one of {ENCODINGS}")
        if self.norm not in NORM_PLACEMENTS:
            problems.append(f"norm must be one of {NORM_PLACEMENTS}")
        if min(self.vocab_size, self.d_model, self.n_heads, self.n_layers, self.max_len) < 1:
            problems.append("sizes must be positive")
        if self.d_ff is not None and self.d_ff < 1:
            problems.append("d_ff must be positive (or None for 4·d_model)")
        if self.target_vocab_size is not None and self.target_vocab_size < 1:
            problems.append("target_vocab_size must be positive (or None for vocab_size)")
        if self.activation not in ACTIVATIONS or self.token_types < 0 or not self.norm_eps > 0:
            problems.append(f"need activation in {tuple(ACTIVATIONS)}, token_types >= 0 and norm_eps > 0")
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
    def causal(self) -> bool:
        """The self-attention mask of the stack that writes the output (`is_causal`)."""
        return is_causal(self.architecture)

    @property
    def output_vocab_size(self) -> int:
        """The vocabulary the model predicts: target_vocab_size for an encoder–decoder (if set)."""
        if self.architecture == "encoder-decoder" and self.target_vocab_size is not None:
            return self.target_vocab_size
        return self.vocab_size

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TransformerConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown TransformerConfig fields: {sorted(unknown)}")
        return cls(**data)


class Transformer(nn.Module):
    """Encoder-only, decoder-only or encoder–decoder transformer built from a TransformerConfig.

    forward(tokens)            — encoder-only / decoder-only: logits for every position.
    forward(source, target)    — encoder–decoder: logits for every target position (teacher forcing).
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.config = config
        arch = config.architecture
        # An encoder reads the input; a decoder writes the output (decoder-only: reads and writes).
        self.encoder = Stack(config, config.vocab_size, EncoderLayer, bidirectional=True) if arch != "decoder" else None
        decoder_layer = DecoderLayer if arch == "encoder-decoder" else EncoderLayer  # GPT: causal EncoderLayers
        self.decoder = (Stack(config, config.output_vocab_size, decoder_layer, bidirectional=False)
                        if arch != "encoder" else None)
        self.lm_head = nn.Linear(config.d_model, config.output_vocab_size)  # hidden state → one logit per token

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
            encoder–decoder; defaults to the architecture's own (`config.causal`: True for decoders).
            Encoder-only models accept causal=True too, so a page can show what masking does to them.
        valid / target_valid: (B, T) booleans, False marks padding keys to ignore.
        """
        arch = self.config.architecture
        trace = ModelTrace()
        causal = self.config.causal if causal is None else causal
        if arch == "encoder":
            x, trace.encoder_embedding, trace.encoder_layers = self.encoder(tokens, causal=causal, valid=valid)
            trace.encoder_output = x  # (B, T, d)
            return self.lm_head(x), trace  # (B, T, vocab)
        if arch == "decoder":
            x, trace.decoder_embedding, trace.decoder_layers = self.decoder(tokens, causal=causal, valid=valid)
            trace.decoder_output = x  # (B, T, d)
            return self.lm_head(x), trace  # (B, T, vocab)
        if target is None:
            raise ValueError("an encoder–decoder model needs a target sequence (teacher forcing)")
        memory, trace.encoder_embedding, trace.encoder_layers = self.encoder(tokens, causal=False, valid=valid)
        y, trace.decoder_embedding, trace.decoder_layers = self.decoder(
            target, causal=causal, valid=target_valid, memory=memory, memory_valid=valid
        )
        trace.encoder_output, trace.decoder_output = memory, y  # (B, T, d), (B, T_out, d)
        return self.lm_head(y), trace  # (B, T_out, target vocab)

    def generate(
        self, tokens: torch.Tensor, n_steps: int, start_token: int | None, *, valid: torch.Tensor | None = None,
        causal: bool | None = None, cache: bool = False,
    ) -> tuple[torch.Tensor, ModelTrace]:
        """Greedy autoregressive decoding, each prediction fed back in as the next input; returns the
        generated ids (B, n_steps) and the last step's trace.  cache=True runs the encoder once and
        keeps every decoder layer's keys and values (the same tokens).  See explorer.model.generation."""
        return generate(self, tokens, n_steps, start_token, valid=valid, causal=causal, cache=cache)


class Stack(nn.Module):
    """Token embedding, positional information, N layers and (pre-norm only) a final LayerNorm."""

    def __init__(self, config: TransformerConfig, vocab_size: int, layer_cls, bidirectional: bool):
        super().__init__()
        c = config
        self.config = c
        self.embed = nn.Embedding(vocab_size, c.d_model)
        self.position = AbsolutePositionalEncoding(
            c.encoding if c.encoding in ABSOLUTE_ENCODINGS else "none", c.max_len, c.d_model, c.base
        )
        self.token_type = nn.Embedding(c.token_types, c.d_model) if c.token_types else None  # BERT's segments
        self.embed_norm = nn.LayerNorm(c.d_model, eps=c.norm_eps) if c.embedding_norm else nn.Identity()
        self.layers = nn.ModuleList(
            layer_cls(c.d_model, c.n_heads, c.ff_dim, c.norm, c.residual, eps=c.norm_eps, activation=c.activation)
            for _ in range(c.n_layers)
        )
        # Pre-norm never normalises the residual stream itself, so the stack's output gets one at the end.
        self.final_norm = nn.LayerNorm(c.d_model, eps=c.norm_eps) if c.norm == "pre" else nn.Identity()
        self.t5_bias = T5RelativeBias(c.n_heads, bidirectional) if c.encoding == "t5" else None
        self.rotary = RotaryEmbedding(c.d_model // c.n_heads, c.base) if c.encoding == "rope" else None

    def forward(self, tokens: torch.Tensor, *, causal: bool, valid: torch.Tensor | None = None,
                memory: torch.Tensor | None = None, memory_valid: torch.Tensor | None = None,
                token_types: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, EmbeddingTrace, list[LayerTrace]]:
        """tokens: (B, T) → (output (B, T, d), how the input to layer 0 was made, each layer's trace).

        memory: the encoder's output (B, T_src, d), for the DecoderLayers of an encoder–decoder;
        memory_valid marks its padding.  token_types: (B, T) segment ids, if the config has them.
        """
        T = tokens.shape[1]
        x, embedding = self.embed_tokens_traced(tokens, token_types)  # (B, T, d)
        mask = attention_mask(T, causal=causal, valid=valid, device=tokens.device)
        bias = self.score_bias(T, tokens.device)  # (1 or B, heads, T, T) for ALiBi and T5, else None
        memory_mask = attention_mask(T, causal=False, valid=memory_valid)  # padding in the source, or None
        traces = []
        for layer in self.layers:
            if memory is None:
                x, layer_trace = layer(x, mask=mask, bias=bias, rotary=self.rotary)
            else:
                x, layer_trace = layer(x, memory, self_mask=mask, memory_mask=memory_mask, bias=bias,
                                       rotary=self.rotary)
            traces.append(layer_trace)
        return self.final_norm(x), embedding, traces  # (B, T, d); pre-norm: the stack's final LayerNorm

    def embed_tokens(self, tokens: torch.Tensor, token_types: torch.Tensor | None = None,
                     start: int = 0) -> torch.Tensor:
        """(B, T) ids at positions start … start+T−1 → (B, T, d): token embeddings + absolute positions
        (+ token types and a LayerNorm, for BERT)."""
        return self.embed_tokens_traced(tokens, token_types, start)[0]

    def embed_tokens_traced(self, tokens: torch.Tensor, token_types: torch.Tensor | None = None,
                            start: int = 0) -> tuple[torch.Tensor, EmbeddingTrace]:
        """`embed_tokens`, and each part of the sum (EmbeddingTrace)."""
        T = start + tokens.shape[1]
        if self.config.max_len < T:
            raise ValueError(f"sequence length {T} exceeds the model's max_len {self.config.max_len}")
        # Scaled by √d as in the paper so the embedding is not drowned by the position vector.
        scale = math.sqrt(self.config.d_model) if self.config.scale_embeddings else 1.0
        token = self.embed(tokens) * scale  # (B, T, d): each id's row of the embedding matrix
        position = self.position(T)[start:]  # (T, d): one vector per position, the same for every sequence
        x = token + position  # (B, T, d)
        segment = None
        if self.token_type is not None:  # every token is in segment 0 unless told otherwise
            segment = self.token_type(torch.zeros_like(tokens) if token_types is None else token_types)  # (B, T, d)
            x = x + segment
        out = self.embed_norm(x)  # (B, T, d): x itself unless the config has an embedding LayerNorm (BERT)
        return out, EmbeddingTrace(token, position, segment, x, out)

    def score_bias(self, T: int, device) -> torch.Tensor | None:
        """What ALiBi or T5 add to the attention scores, (1, heads, T, T); None for other encodings."""
        if self.config.encoding == "alibi":
            return torch.from_numpy(alibi_bias(self.config.n_heads, T)).float().to(device)[None]
        if self.t5_bias is not None:
            return self.t5_bias(T)
        return None


def _norm(d_model: int, norm: str, eps: float) -> nn.Module:
    """A LayerNorm, or an Identity for norm="none"."""
    if norm not in NORM_PLACEMENTS:
        raise ValueError(f"norm must be one of {NORM_PLACEMENTS}")
    return nn.Identity() if norm == "none" else nn.LayerNorm(d_model, eps=eps)


class Sublayers(nn.Module):
    """A layer made of sub-layers (attention, feed-forward), each wrapped the same way: `norm` is "post"
    (the paper), "pre" or "none"; `residual=False` drops the residual connections (the depth lesson)."""

    norm: str
    residual: bool

    def add_and_norm(self, x: torch.Tensor, norm: nn.Module, sublayer, *args, **kwargs
                     ) -> tuple[torch.Tensor, SublayerTrace]:
        """x through `sublayer(x, *args, **kwargs)` with its residual connection and LayerNorm:

            pre-norm   x + F(LN(x))        post-norm  LN(x + F(x))        (without the residual: no "x +")

        The sub-layer returns (output, its own trace).  Returns (the new x, SublayerTrace: each step,
        in the order it ran, with the sub-layer's own trace as `inner`)."""
        normed_input = norm(x) if self.norm == "pre" else None  # (B, T, d) pre-norm: LN first
        out, inner = sublayer(x if normed_input is None else normed_input, *args, **kwargs)  # (B, T, d)
        added = x + out if self.residual else out  # (B, T, d) the residual connection: the gradient's short cut
        normed_sum = norm(added) if self.norm == "post" else None  # (B, T, d) post-norm: LN last
        step = SublayerTrace(x, normed_input, out, added, normed_sum, inner)
        return step.result, step


class EncoderLayer(Sublayers):
    """Self-attention then feed-forward, each with a residual connection and a LayerNorm.

    Unmasked in an encoder; give it a causal mask and it is a decoder-only ("GPT-style") layer.
    norm: "post" (the paper), "pre" or "none"; residual=False drops both residual connections
    (the depth lesson's comparisons; `rewired` gives the same weights another wiring).
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, norm: str = "post", residual: bool = True,
                 eps: float = 1e-5, activation: str = "relu"):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads)
        self.ffn = FeedForward(d_model, d_ff, activation)
        self.attn_norm = _norm(d_model, norm, eps)  # around the self-attention
        self.ffn_norm = _norm(d_model, norm, eps)  # around the feed-forward network
        self.norm = norm
        self.residual = residual

    def forward(self, x, mask=None, bias=None, rotary=None, cache: KVCache | None = None
                ) -> tuple[torch.Tensor, LayerTrace]:
        """x: (B, T, d) → (B, T, d) and the layer's trace.  mask, bias, rotary, cache: see MultiHeadAttention."""
        x, attn = self.add_and_norm(x, self.attn_norm, self.self_attn, mask=mask, bias=bias, rotary=rotary,
                                    cache=cache)  # (B, T, d)
        x, ffn = self.add_and_norm(x, self.ffn_norm, self.ffn.traced)  # (B, T, d)
        return x, LayerTrace(self_attention=attn.inner, cross_attention=None, hidden=x,
                             attention_sublayer=attn, ffn_sublayer=ffn)

    def rewired(self, norm: str | None = None, residual: bool | None = None) -> EncoderLayer:
        """A new layer with this layer's weights (the same tensors, not copies), wired differently.

        This layer is left as it is, so a model shared by every session can be rewired for one.
        None keeps this layer's setting.  A layer without LayerNorms (norm="none") has none to put back.
        """
        norm = self.norm if norm is None else norm
        residual = self.residual if residual is None else residual
        if self.norm == "none" and norm != "none":
            raise ValueError("this layer has no LayerNorms to put back (it was built with norm='none')")
        attn = self.self_attn
        with torch.device("meta"):  # a skeleton: no memory and no random draws; its parts are replaced
            layer = EncoderLayer(attn.d_model, attn.n_heads, self.ffn.linear1.out_features, norm, residual)
        layer.self_attn, layer.ffn = self.self_attn, self.ffn
        if norm != "none":
            layer.attn_norm, layer.ffn_norm = self.attn_norm, self.ffn_norm
        layer.training = self.training
        return layer


class DecoderLayer(Sublayers):
    """Masked self-attention, cross-attention to the encoder output, then feed-forward."""

    def __init__(self, d_model: int, n_heads: int, d_ff: int, norm: str = "post", residual: bool = True,
                 eps: float = 1e-5, activation: str = "relu"):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads)
        self.cross_attn = MultiHeadAttention(d_model, n_heads)
        self.ffn = FeedForward(d_model, d_ff, activation)
        self.attn_norm, self.cross_norm, self.ffn_norm = (_norm(d_model, norm, eps) for _ in range(3))
        self.norm = norm
        self.residual = residual

    def forward(self, x, memory, self_mask=None, memory_mask=None, bias=None, rotary=None,
                self_cache: KVCache | None = None, cross_cache: KVCache | None = None
                ) -> tuple[torch.Tensor, LayerTrace]:
        """x: (B, T, d), memory: the encoder's output (B, T_src, d) → (B, T, d) and the layer's trace.
        With caches (one generation step), memory may be None: cross_cache holds its keys and values."""
        x, self_attn = self.add_and_norm(x, self.attn_norm, self.self_attn, mask=self_mask, bias=bias,
                                         rotary=rotary, cache=self_cache)  # (B, T, d)
        # Cross-attention: queries come from the decoder, keys and values from the encoder ("memory").
        x, cross_attn = self.add_and_norm(x, self.cross_norm, self.cross_attn, memory, mask=memory_mask,
                                          cache=cross_cache)  # (B, T, d)
        x, ffn = self.add_and_norm(x, self.ffn_norm, self.ffn.traced)  # (B, T, d)
        return x, LayerTrace(self_attention=self_attn.inner, cross_attention=cross_attn.inner, hidden=x,
                             attention_sublayer=self_attn, cross_sublayer=cross_attn, ffn_sublayer=ffn)


class FeedForward(nn.Module):
    """Position-wise two-layer network: expand to d_ff, ReLU (or GELU), project back to d_model."""

    def __init__(self, d_model: int, d_ff: int, activation: str = "relu"):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.activation = ACTIVATIONS[activation]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, d) → (B, T, d)."""
        return self.traced(x)[0]

    def traced(self, x: torch.Tensor) -> tuple[torch.Tensor, FeedForwardTrace]:
        """(B, T, d) → (output (B, T, d), its hidden activations before and after the non-linearity)."""
        hidden_pre = self.linear1(x)  # (B, T, d_ff): each position on its own, widened
        hidden = self.activation(hidden_pre)  # (B, T, d_ff): ReLU sets the negatives to 0
        out = self.linear2(hidden)  # (B, T, d): back to the model's width
        return out, FeedForwardTrace(hidden_pre, hidden, out)
