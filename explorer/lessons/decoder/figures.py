"""The decoder lesson's figures at one setting, from its views (explorer.lessons.decoder.view, read
by attribute): the stepping figure, free running against teacher forcing and their losses; what the
KV cache keeps, its exact counts and its stopwatch; the architectures' blocks and parameter table."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.lessons.decoder.charts import (
    architecture_figure,
    cache_figure,
    forcing_figure,
    line_figure,
    step_figure,
    sweep_figure,
)

__all__ = ["ArchitectureFigures", "CacheFigures", "DecoderFigures", "architecture_figures", "cache_figures",
           "decoder_figures"]


@dataclass(frozen=True)
class DecoderFigures:
    step: go.Figure | None  # None when the model could not be loaded
    forcing: go.Figure | None
    loss: go.Figure | None  # None without a right answer


def _judged(tokens, right) -> list[bool | None]:
    return [None if right is None else t == r for t, r in zip(tokens, right or tokens, strict=False)]


def _step(view) -> go.Figure:
    run, ex, k = view.run, view.example, view.step
    future = ["?"] * (ex.n_steps - view.settings.t)
    queries = [*run.queries[:view.settings.t], *future]
    first = len(run.keys) - ex.n_steps + 1  # keys read by the first step: <s>, or the whole prompt
    keys = [*run.keys[:first + k], *(["?"] * (len(run.keys) - first - k))]
    return step_figure([run.vocab[i] for i in view.top], run.probs[k, view.top], run.written[k], view.self_shown,
                       queries, keys, view.cross_shown, list(ex.tokens), k, height=380 if ex.n_steps <= 8 else 440,
                       present_height=300 if ex.n_steps <= 8 else 380)  # presenting: under the step slider


def _forcing(view) -> go.Figure:
    free, forced, right, ex = view.run, view.forced, view.example.expected, view.example
    steps = [f"step {k + 1}" for k in range(free.n_steps)]
    reads_right = None if right is None else (free.keys[0] if ex.start is not None else ex.tokens[-1], *right[:-1])
    rows = [("free running reads", free.queries, _judged(free.queries, reads_right)),
            ("free running writes", free.written, _judged(free.written, right))]
    if forced is not None:
        rows += [("teacher forcing reads", forced.queries, _judged(forced.queries, reads_right)),
                 ("teacher forcing writes", forced.written, _judged(forced.written, right))]
    return forcing_figure(rows, steps, view.settings.put_in)


def decoder_figures(view) -> DecoderFigures:
    if view.run is None:
        return DecoderFigures(None, None, None)
    loss = None
    if view.forced is not None:
        put_in = view.settings.put_in
        loss = line_figure(np.arange(1, view.run.n_steps + 1),
                           {"free running": view.run.losses, "teacher forcing": view.forced.losses}, x_title="step",
                           y_title="loss −ln p(right token)", dashes={"teacher forcing": "dash"},
                           marker_x=None if put_in is None else put_in + 1, title="Loss at each step")
    return DecoderFigures(_step(view), _forcing(view), loss)


@dataclass(frozen=True)
class CacheFigures:
    grid: go.Figure | None  # None when the model could not be loaded
    counts: go.Figure | None
    sweep: go.Figure | None


def cache_figures(view) -> CacheFigures:
    counts = view.counts
    if counts is None:
        return CacheFigures(None, None, None)
    steps = np.arange(1, view.example.n_steps + 1)
    return CacheFigures(
        cache_figure(view.n_layers, view.n_source, view.position, view.new),
        line_figure(steps, {"without the cache": counts.uncached, "with the cache": counts.cached}, x_title="step",
                    y_title="multiplications", title="Multiplications per step (this example)",
                    marker_x=view.step + 1, dashes={"with the cache": "dash"}),
        sweep_figure(view.sweeps, view.length))


@dataclass(frozen=True)
class ArchitectureFigures:
    blocks: go.Figure
    table: pd.DataFrame


def architecture_figures(view) -> ArchitectureFigures:
    """The blocks of the three architectures and the parameter table, each count's share of the
    encoder–decoder's."""
    rows = view.rows
    both = view.row("encoder–decoder")
    table = pd.DataFrame({
        "architecture": [r.name for r in rows], "layers": [r.layers for r in rows],
        "attention (encoder | decoder)": [r.blocks for r in rows], "parameters": [r.parameters for r in rows],
        "in the layers": [r.in_layers for r in rows], "embeddings and output": [r.in_embeddings for r in rows],
        "share of encoder–decoder": [r.parameters / both.parameters for r in rows],
    })
    counts = [(r.parameters, None if r is both else r.parameters / both.parameters, r.in_layers, r.in_embeddings)
              for r in (view.row("encoder-only"), view.row("decoder-only"), both)]
    return ArchitectureFigures(architecture_figure(view.settings.n_layers, counts=counts), table)
