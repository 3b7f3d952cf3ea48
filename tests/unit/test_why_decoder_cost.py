"""Issue #59 for the decoder and cost lessons: each explanation the lessons give, checked against an
independent reference (a closed form, torch's FLOP counter, a parallel forward pass of the real model)."""

import torch
from torch.utils.flop_counter import FlopCounterMode

from explorer.analysis.cost import cache_setup_cost
from explorer.training.pretrained import load_model
from explorer.views.decoder import DECODER_MODELS, step_counts


def _multiplications(fn) -> int:
    """Multiply-adds of the matrix products run by fn (torch's FLOP counter reports 2 each)."""
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        fn()
    return counter.get_total_flops() // 2


# --- decoder: what the KV cache saves (the encoder runs once, with the cache or without) ---------------


def test_uncached_step_runs_the_decoder_again_not_the_encoder():
    """Reversing J A B B E D C O D E, step 11 (11 decoder positions, 10 source letters): without the
    cache the decoder runs again on all 11 positions over the encoder output computed once; the encoder
    is no part of the step.  Closed form per layer: self-attention 4·T·d² + 2·T²·d, cross-attention
    2·T·d² + 2·T_src·d² + 2·T·T_src·d, feed-forward 2·T·d·d_ff; then T·d·vocab logits."""
    model = load_model(DECODER_MODELS["reverse"]).model
    c = model.config
    d, n, vocab, d_ff, T, T_src = c.d_model, c.n_layers, c.output_vocab_size, c.ff_dim, 11, 10
    per_layer = (4 * T * d * d + 2 * T * T * d) + (2 * T * d * d + 2 * T_src * d * d + 2 * T * T_src * d) \
        + 2 * T * d * d_ff
    closed = n * per_layer + T * d * vocab
    counts = step_counts("reverse", T_src, T)
    assert counts.uncached[T - 1] == closed == 1_497_920
    # torch's own count of the decoder re-run over a kept encoder output
    source, prefix = torch.randint(3, vocab, (1, T_src)), torch.randint(3, vocab, (1, T))
    memory = model.encoder(source, causal=False)[0]
    assert _multiplications(lambda: model.lm_head(model.decoder(prefix, causal=True, memory=memory)[0])) == closed
    encoder = _multiplications(lambda: model.encoder(source, causal=False))
    assert counts.encoder == encoder == cache_setup_cost(d, n, T_src, c.d_ff).encoder == 1_008_640
    # the saving at this step: 12.35×, not the 20.7× of an uncached count that re-ran the encoder
    ratio = counts.uncached[T - 1] / counts.cached[T - 1]
    assert round(ratio, 2) == 12.35 and round((counts.uncached[T - 1] + encoder) / counts.cached[T - 1]) == 21
    # whole output: the encoder once both ways, the cache's cross-attention keys and values once
    assert counts.uncached_total == encoder + sum(counts.uncached)
    assert counts.cached_total == encoder + n * 2 * T_src * d * d + sum(counts.cached)
