"""Generation: greedy decoding one token at a time, with or without a KV cache.

A decoder writes its output one token at a time, each token fed back in as the next input.

* Without a cache (`cache=False`) every step runs the whole model again on everything written so
  far — for an encoder–decoder, the encoder too — and keeps only the last position's logits.
* With the cache (`cache=True`) the encoder runs once, each decoder layer keeps the keys and values
  it has already computed (self-attention: one more per step; cross-attention: the encoder output's,
  computed once), and each step computes the new position only.

The cache is exact because of the causal mask: no position ever reads a later one, so the rows
already computed do not change when the output grows.  Without the mask they would (every position
would read the new token), and there would be nothing to keep: `cache=True` then refuses.

Read top-down:

    generate              the greedy loop, both ways
    IncrementalDecoder    the encoder once, then `step(new tokens)` → logits and trace for those only,
                          through the layers' own forward with a `KVCache` per attention module
                          (explorer/model/attention.py: self-attention's grows a position a step,
                          cross-attention's holds the encoder output's keys and values, made once)

`model` is a `Transformer` (explorer/model/transformer.py, which calls `generate` from its own
method; this module names it only in words, so the two do not import each other).
"""

from __future__ import annotations

import torch
from torch import nn

from .attention import KVCache, combine_masks, key_padding_mask
from .trace import ModelTrace

__all__ = ["IncrementalDecoder", "generate"]


@torch.no_grad()
def generate(
    model: nn.Module, tokens: torch.Tensor, n_steps: int, start_token: int | None, *,
    valid: torch.Tensor | None = None, causal: bool | None = None, cache: bool = False,
) -> tuple[torch.Tensor, ModelTrace]:
    """Greedy decoding: `n_steps` tokens, each the likeliest next one, fed back in.

    Encoder–decoder: `tokens` (B, T_src) is the source and decoding starts from `start_token`.
    Decoder-only: `tokens` is the prompt to continue (`start_token` is not used).  `valid` marks
    real tokens of the source or prompt (False = padding).  `causal` is the decoder's self-attention
    mask (default True).  Returns the generated ids (B, n_steps) and the trace of the last step:
    without the cache, the full forward pass over everything before the last token; with it, the
    last position's rows only (queries T = 1).
    """
    arch = model.config.architecture
    if arch == "encoder":
        raise ValueError("an encoder-only model does not generate")
    if arch == "encoder-decoder" and start_token is None:
        raise ValueError("an encoder–decoder model needs a start token to begin decoding")
    batch = tokens.shape[0]
    out = torch.full((batch, 1), start_token, dtype=torch.long) if arch == "encoder-decoder" else tokens
    if cache:
        if causal is False:
            raise ValueError("a KV cache needs the causal mask: without it every earlier position would "
                             "read each new token, so nothing computed before could be kept")
        decoder = IncrementalDecoder(model, tokens if arch == "encoder-decoder" else None, valid=valid)
        fed, fed_valid = out, (valid if arch == "decoder" else None)
        for _ in range(n_steps):
            logits, trace = decoder.step(fed, valid=fed_valid)
            fed, fed_valid = logits[:, -1:].argmax(-1), None  # the likeliest next token is the next input
            out = torch.cat([out, fed], dim=1)
        return out[:, out.shape[1] - n_steps:], trace if n_steps else ModelTrace()
    trace = ModelTrace()
    for _ in range(n_steps):
        if arch == "encoder-decoder":
            logits, trace = model(tokens, out, causal=causal, valid=valid)
        else:  # the prompt's padding stays hidden; every generated token is real
            grown = None if valid is None else torch.cat(
                [valid.bool(), torch.ones(batch, out.shape[1] - valid.shape[1], dtype=torch.bool)], dim=1)
            logits, trace = model(out, causal=causal, valid=grown)
        out = torch.cat([out, logits[:, -1:].argmax(-1)], dim=1)  # the likeliest next token, appended
    return out[:, out.shape[1] - n_steps:], trace


class IncrementalDecoder:
    """A model's decoder run a few positions at a time, keeping every layer's keys and values.

    Made once per generation (never stored on the shared model).  For an encoder–decoder the
    constructor runs the encoder on `source` and computes each layer's cross-attention keys and
    values; then `step(tokens)` feeds the next decoder input(s) and returns the logits and the trace
    of those positions only.  A decoder-only model can take its whole prompt in the first step.
    """

    def __init__(self, model: nn.Module, source: torch.Tensor | None = None, *,
                 valid: torch.Tensor | None = None):
        arch = model.config.architecture
        if arch == "encoder":
            raise ValueError("an encoder-only model has no decoder to run")
        if (arch == "encoder-decoder") != (source is not None):
            raise ValueError("an encoder–decoder needs a source; a decoder-only model takes none")
        self.model = model
        self.stack = model.decoder
        self.length = 0  # decoder positions computed so far
        self.key_valid: torch.Tensor | None = None  # (B, length), False on a decoder-only prompt's padding
        self.encoder_trace = ModelTrace()
        if arch == "encoder-decoder":
            memory, self.encoder_trace.encoder_embedding, self.encoder_trace.encoder_layers = model.encoder(
                source, causal=False, valid=valid)
            self.encoder_trace.encoder_output = memory  # (B, T_src, d)
            self.memory_mask = None if valid is None else key_padding_mask(valid)  # (B, 1, 1, T_src)
            self.cross_caches = [layer.cross_attn.cache(memory) for layer in self.stack.layers]
        self.self_caches = [KVCache() for _ in self.stack.layers]

    @torch.no_grad()
    def step(self, tokens: torch.Tensor, valid: torch.Tensor | None = None) -> tuple[torch.Tensor, ModelTrace]:
        """tokens: (B, n) the next n decoder inputs → (logits (B, n, vocab), trace of these n positions).

        valid: (B, n) False on padding (a decoder-only prompt's); later keys are real by default.
        The trace's decoder layers hold the new rows only: self-attention (B, heads, n, keys so
        far), cross-attention (B, heads, n, T_src); its encoder part is the one run made at the start.
        """
        batch, n = tokens.shape
        start, total = self.length, self.length + n
        x, embedding = self.stack.embed_tokens_traced(tokens, start=start)  # (B, n, d), positions start … total − 1
        new_valid = torch.ones(batch, n, dtype=torch.bool) if valid is None else valid.bool()
        self.key_valid = new_valid if self.key_valid is None else torch.cat([self.key_valid, new_valid], dim=1)
        # New query i sits at position start + i and may read keys 0 … start + i (causal).
        causal = torch.arange(start, total)[:, None] >= torch.arange(total)[None, :]  # (n, total)
        mask = combine_masks(causal, key_padding_mask(self.key_valid) if not self.key_valid.all() else None)
        bias = self.stack.score_bias(total, tokens.device)  # ALiBi / T5 table (no products), or None
        bias = None if bias is None else bias[:, :, start:total, :]  # the new rows
        traces = []
        for i, layer in enumerate(self.stack.layers):  # the layers' own forward, with this generation's caches
            if self.model.config.architecture == "decoder":
                x, layer_trace = layer(x, mask=mask, bias=bias, rotary=self.stack.rotary, cache=self.self_caches[i])
            else:
                x, layer_trace = layer(x, None, self_mask=mask, memory_mask=self.memory_mask, bias=bias,
                                       rotary=self.stack.rotary, self_cache=self.self_caches[i],
                                       cross_cache=self.cross_caches[i])
            traces.append(layer_trace)
        self.length = total
        x = self.stack.final_norm(x)  # (B, n, d)
        trace = ModelTrace(encoder_embedding=self.encoder_trace.encoder_embedding, decoder_embedding=embedding,
                           encoder_layers=self.encoder_trace.encoder_layers, decoder_layers=traces,
                           encoder_output=self.encoder_trace.encoder_output, decoder_output=x)
        return self.model.lm_head(x), trace
