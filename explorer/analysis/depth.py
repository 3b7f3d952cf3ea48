"""Depth instead of time: the gradient reaching each layer's input in a stack of encoder layers,
with or without residual connections, post-norm, pre-norm or without LayerNorm.

`layer_gradient_norms` builds the stack from `EncoderLayer`s (`build_layer_stack`) and asks autograd;
`depth_gradient_norms` computes the same for several seeds and every wiring at once, on weights
drawn once per (width, seed), with batched matrix products (what the depth page draws).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from ..caching import bounded_cache
from ..model.building import seeded
from ..model.transformer import NORM_PLACEMENTS, EncoderLayer
from .gradients import INPUT_SEED_OFFSET, default_readout, random_sequence

__all__ = [
    "DEPTH_CACHED_LAYERS",
    "DEPTH_CONFIGS",
    "DEPTH_NORMS",
    "build_layer_stack",
    "depth_gradient_norms",
    "layer_gradient_norms",
]

DEPTH_NORMS = NORM_PLACEMENTS  # LayerNorm after each sublayer, before it, or none
DEPTH_CONFIGS = tuple((norm, residual) for norm in DEPTH_NORMS for residual in (True, False))


def _seeded_stack(n_layers: int, width: int, seed: int, n_heads: int) -> nn.ModuleList:
    """n_layers post-norm EncoderLayers and a final LayerNorm, float64, drawn from the seed (other
    wirings are these layers `rewired`)."""
    with seeded(seed):
        layers = [EncoderLayer(width, n_heads, 4 * width) for _ in range(n_layers)]
    return nn.ModuleList([*layers, nn.LayerNorm(width)]).double().eval().requires_grad_(False)


def build_layer_stack(
    n_layers: int, width: int, *, residual: bool, norm: str, seed: int = 0, n_heads: int = 4
) -> nn.ModuleList:
    """n_layers EncoderLayers (unmasked self-attention + FFN with d_ff = 4·width) and a last module
    that is a final LayerNorm for pre-norm (as in `explorer.model.transformer`) or an Identity; float64,
    seeded without touching the global random state.

    norm: "post" (the paper: LayerNorm after each residual add), "pre" (LayerNorm before each
    sublayer) or "none" (no LayerNorm at all, for comparison).  A given seed gives the same
    weights whatever the norm and residual settings: only the wiring differs, so the comparison
    isolates it.
    """
    if norm not in DEPTH_NORMS:
        raise ValueError(f"norm must be one of {DEPTH_NORMS}")
    stack = _seeded_stack(n_layers, width, seed, n_heads)
    layers = [layer.rewired(norm, residual) for layer in stack[:-1]]  # the same weights, wired as asked
    return nn.ModuleList([*layers, stack[-1] if norm == "pre" else nn.Identity()])


def _stack_gradient_norms(stack: nn.ModuleList, x: torch.Tensor) -> np.ndarray:
    h = x[None].clone().requires_grad_(True)
    inputs = []
    for layer in stack[:-1]:
        inputs.append(h)
        h, _ = layer(h)
    h = stack[-1](h)
    loss = (h[0] * default_readout(*x.shape)).sum()
    grads = torch.autograd.grad(loss, inputs)
    return np.array([g.norm().item() for g in grads], dtype=np.float64)


def layer_gradient_norms(
    n_layers: int, width: int = 32, residual: bool = True, norm: str = "post", seed: int = 0, T: int = 16
) -> np.ndarray:
    """‖∂L/∂h_l‖ at the input h_l of every layer l = 0 … n_layers−1 (h_0 is the stack's input), float64.

    The stack is `build_layer_stack(...)` (unmasked self-attention, 4 heads; norm "post", "pre" or
    "none"), the input random_sequence(T, width, seed=1000 + seed), and L = Σ_t r_t · y_t for a
    fixed unit read-out r of the whole output.
    """
    if n_layers < 1:
        raise ValueError("n_layers must be at least 1")
    stack = build_layer_stack(n_layers, width, residual=residual, norm=norm, seed=seed)
    return _stack_gradient_norms(stack, random_sequence(T, width, seed=INPUT_SEED_OFFSET + seed))


DEPTH_CACHED_LAYERS = 24  # the depth page's deepest stack; weights are drawn once per (width, seed) up to it


@bounded_cache(16, max_bytes=32_000_000)
def _seed_weights(width: int, seed: int, n_layers: int) -> tuple[dict[str, torch.Tensor], ...]:
    """The weights of `_seeded_stack(n_layers, width, seed, 4)` as tensors, layer by layer, then the
    final LayerNorm's.  Layers are drawn in order from the seed, so the first L layers of a deeper
    stack are the L-layer stack: one draw up to DEPTH_CACHED_LAYERS serves every depth below it.
    Linear maps are transposed for x @ W."""
    stack = _seeded_stack(n_layers, width, seed, 4)
    layers = []
    for layer in stack[:-1]:
        attn, ffn = layer.self_attn, layer.ffn
        layers.append({
            "qkv_w": torch.cat([attn.q_proj.weight, attn.k_proj.weight, attn.v_proj.weight]).t().contiguous(),
            "qkv_b": torch.cat([attn.q_proj.bias, attn.k_proj.bias, attn.v_proj.bias]),
            "out_w": attn.out_proj.weight.t().contiguous(), "out_b": attn.out_proj.bias,
            "ff1_w": ffn.linear1.weight.t().contiguous(), "ff1_b": ffn.linear1.bias,
            "ff2_w": ffn.linear2.weight.t().contiguous(), "ff2_b": ffn.linear2.bias,
            "attn_norm_w": layer.attn_norm.weight, "attn_norm_b": layer.attn_norm.bias,
            "ffn_norm_w": layer.ffn_norm.weight, "ffn_norm_b": layer.ffn_norm.bias,
        })
    layers.append({"norm_w": stack[-1].weight, "norm_b": stack[-1].bias})
    # Kept in float32, which holds them exactly, at half the memory of float64.
    return tuple({name: t.float() for name, t in layer.items()} for layer in layers)


def _stacked_seed_weights(width: int, n_layers: int, n_seeds: int) -> list[dict[str, torch.Tensor]]:
    """Per layer, each weight of seeds 0 … n_seeds−1 stacked on a new first axis (biases and norm
    parameters shaped (S, 1, n) to broadcast over positions), float32."""
    drawn = max(n_layers, DEPTH_CACHED_LAYERS)
    seeds = [_seed_weights(width, s, drawn) for s in range(n_seeds)]
    picked = [*range(n_layers), drawn]  # the first n_layers layers and the final LayerNorm
    matrices = {"qkv_w", "out_w", "ff1_w", "ff2_w"}
    stacked = []
    for i in picked:
        layer = {name: torch.stack([weights[i][name] for weights in seeds]) for name in seeds[0][i]}
        stacked.append({name: t if name in matrices else t[:, None] for name, t in layer.items()})
    return stacked


def _layer_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """LayerNorm over the last axis with a weight and bias per batch item, shaped (B, 1, d)."""
    mean = x.mean(-1, keepdim=True)
    var = (x - mean).pow(2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * weight + bias


def _seed_batched_norms(layers: list[dict[str, torch.Tensor]], inputs: torch.Tensor,
                        wirings: tuple[tuple[str, bool], ...], n_heads: int = 4,
                        loss_scale: float = 1.0) -> torch.Tensor:
    """`_stack_gradient_norms` of every seed's stack under each wiring, seeds and wirings in one pass.

    The same computation as `EncoderLayer.forward` (wired by `EncoderLayer.rewired`) — sublayer h = LN(x) for pre-norm,
    x + F(h) with a residual, LN of that for post-norm, a final LayerNorm for pre-norm only — written
    with batched matrix products over per-seed weights (`_stacked_seed_weights`).  The wirings ride on
    an axis of their own: each one's switches are 0/1 factors (x·1 and y + 0·z are exact), so C
    wirings of S seeds cost one pass of small operations instead of C·S (checked against
    `layer_gradient_norms` in the tests).  The wirings never mix: attention looks only within its own
    wiring's T positions, and the loss is their sum, so each input's gradient is its own wiring's.
    inputs: (S, T, width), in the dtype to compute in (the weights are cast to it).  The loss is
    multiplied by `loss_scale` and the norms divided by it (see `LOSS_SCALE`).  Returns (S, C, n_layers),
    float64.
    """
    layers = [{name: t.to(inputs.dtype) for name, t in w.items()} for w in layers]
    S, T, width = inputs.shape
    C, dh = len(wirings), width // n_heads

    def switch(on) -> torch.Tensor:  # (1, C, 1, 1): 1.0 where the wiring has the piece, else 0.0
        return torch.tensor([float(o) for o in on], dtype=inputs.dtype).view(1, C, 1, 1)

    pre, post = switch(n == "pre" for n, _ in wirings), switch(n == "post" for n, _ in wirings)
    skip = switch(r for _, r in wirings)

    def linear(h, weight, bias):  # per seed: (S, C, T, a) @ (S, a, b), the wirings and positions as rows
        return torch.baddbmm(bias, h.reshape(S, C * T, -1), weight).view(S, C, T, -1)

    def layer_norm(x, weight, bias):  # (S, 1, n) parameters → (S, 1, 1, n) to broadcast over wirings
        return _layer_norm(x, weight[:, None], bias[:, None])

    def attention(h, w):
        q, k, v = linear(h, w["qkv_w"], w["qkv_b"]).view(S, C, T, 3, n_heads, dh).permute(3, 0, 1, 4, 2, 5)
        weights = torch.softmax(q @ k.transpose(-2, -1) * (1.0 / math.sqrt(dh)), dim=-1)  # (S, C, heads, T, T)
        return linear((weights @ v).transpose(2, 3).reshape(S, C, T, width), w["out_w"], w["out_b"])

    def feed_forward(h, w):
        return linear(torch.relu(linear(h, w["ff1_w"], w["ff1_b"])), w["ff2_w"], w["ff2_b"])

    def wrapped(x, norm_w, norm_b, sublayer):
        h = pre * layer_norm(x, norm_w, norm_b) + (1 - pre) * x
        y = skip * x + sublayer(h)
        return post * layer_norm(y, norm_w, norm_b) + (1 - post) * y

    with torch.enable_grad():
        h = inputs[:, None].expand(S, C, T, width).clone().requires_grad_(True)
        layer_inputs = []
        for w in layers[:-1]:
            layer_inputs.append(h)
            h = wrapped(h, w["attn_norm_w"], w["attn_norm_b"], lambda x, w=w: attention(x, w))
            h = wrapped(h, w["ffn_norm_w"], w["ffn_norm_b"], lambda x, w=w: feed_forward(x, w))
        h = pre * layer_norm(h, layers[-1]["norm_w"], layers[-1]["norm_b"]) + (1 - pre) * h  # final LN: pre-norm
        loss = (h * default_readout(T, width).to(h.dtype)).sum() * loss_scale
        grads = torch.autograd.grad(loss, layer_inputs)
    return torch.stack([g.flatten(2).double().norm(dim=2) for g in grads], dim=2) / loss_scale  # squares: float64


# Float32 halves the cost of the batched pass, but without a residual or a LayerNorm the gradient falls
# by ~30 orders of magnitude over 24 layers and float32's backward pass rounds the deepest layers' to 0.
# Scaling the loss by a power of two (exact) lifts every gradient by the same factor, into float32's
# range (≈1e-38 … 3e38); the norms are divided back.  If any scaled norm falls outside FLOAT32_SAFE
# (deeper stacks than the page offers: float32 would hold it only roughly, or not at all), the wirings
# are computed again in float64.
LOSS_SCALE = 2.0 ** 64
FLOAT32_SAFE = (1e-20, 1e30)


def _wiring_norms(layers: list[dict[str, torch.Tensor]], inputs: torch.Tensor,
                  wirings: tuple[tuple[str, bool], ...]) -> torch.Tensor:
    """`_seed_batched_norms` in float32 with LOSS_SCALE, or in float64 if float32 lost a norm."""
    norms = _seed_batched_norms(layers, inputs.float(), wirings, loss_scale=LOSS_SCALE)
    scaled = norms * LOSS_SCALE
    if bool(torch.all((scaled >= FLOAT32_SAFE[0]) & (scaled <= FLOAT32_SAFE[1]))):
        return norms
    return _seed_batched_norms(layers, inputs.double(), wirings)


def _call(fn, *args, **kwargs):
    return fn(*args, **kwargs)


def depth_gradient_norms(
    n_layers: int, width: int, T: int, n_seeds: int, *, run=_call
) -> dict[tuple[str, bool], np.ndarray]:
    """`layer_gradient_norms` for seeds 0 … n_seeds−1 and every (norm, residual) in DEPTH_CONFIGS,
    each (n_seeds, n_layers).  The seeds and three wirings at a time run as one batch
    (`_seed_batched_norms`) on weights drawn once per (width, seed) (`_seed_weights`).  Each piece of
    work — one seed's weights, stacking them, three wirings — is `run(fn, *args)`: a caller may run
    them elsewhere (on a work pool)."""
    drawn = max(n_layers, DEPTH_CACHED_LAYERS)
    for s in range(n_seeds):
        run(_seed_weights, width, s, drawn)  # cached: the stacking below finds them drawn
    layers = run(_stacked_seed_weights, width, n_layers, n_seeds)
    inputs = torch.stack([random_sequence(T, width, seed=INPUT_SEED_OFFSET + s) for s in range(n_seeds)])
    curves = {}
    for residual in (True, False):  # two pieces of three wirings: each a bounded share of the pool
        wirings = tuple((norm, residual) for norm in DEPTH_NORMS)
        norms = run(_wiring_norms, layers, inputs, wirings).numpy()
        curves.update({wiring: norms[:, c] for c, wiring in enumerate(wirings)})
    return {wiring: curves[wiring] for wiring in DEPTH_CONFIGS}
