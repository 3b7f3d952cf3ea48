"""The positional-encodings lesson's figures, made once per setting from its views
(explorer.lessons.positions.view): the matrix and its geometry, the shipped models side by side, the
relative schemes.  Views are read by attribute (figures import no other layer)."""

from __future__ import annotations

from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go

from explorer.figures.common import SEQUENTIAL
from explorer.figures.matrices import line_chart, matrix_heatmap, panel_grid

# Presenting, under a step's answer and the section's heading, a tall encoding matrix ends on a 720 px screen.
PRESENT_MATRIX_PX = 490
PRESENT_SIMILARITY_PX = 490  # the same for section 2's similarity grid, drawn first by the steps about it

__all__ = ["ModelFigures", "PositionFigures", "RelativeFigures", "model_figures", "position_figures",
           "relative_figures"]


@dataclass(frozen=True)
class PositionFigures:
    matrix: go.Figure
    similarity: go.Figure
    offsets: alt.Chart | None  # similarity of p with p + k (none for a single position)
    wavelengths: alt.Chart | None  # sinusoidal only


def position_figures(view) -> PositionFigures:
    m, labels, measure = view.matrix, view.row_labels, view.settings.measure
    n_rows, n_cols = m.shape
    bound = view.bound
    matrix = matrix_heatmap(m.drawn, row_values=m.plan.rows, col_values=m.plan.cols, row_labels=labels,
                            x_title="dimension", y_title="position", value_name="PE value",
                            title=f"{m.kind}: {n_rows} positions × {n_cols} dimensions",
                            zmin=-bound if bound else None, zmax=bound, number_format=".3f",
                            height=None if n_rows <= 24 else 620, present_height=PRESENT_MATRIX_PX)
    cosine = measure == "cosine"
    sim_labels = labels if labels is not None and len(m.sim_rows) == len(labels) else None
    similarity = matrix_heatmap(m.similarity, row_values=m.sim_rows, col_values=m.sim_rows, row_labels=sim_labels,
                                col_labels=sim_labels, x_title="position", y_title="position", value_name=measure,
                                title=f"PE·PEᵀ ({measure})", zmin=-1.0 if cosine else None,
                                zmax=1.0 if cosine else None, annotate=len(m.sim_rows) <= 8, number_format=".2f",
                                height=520 if len(m.sim_rows) > 8 else None, present_height=PRESENT_SIMILARITY_PX)
    offsets = None
    if n_rows > 1:
        frame = pd.concat([pd.DataFrame({"offset k": np.arange(len(v)), measure: v, "from position": f"p = {p}"})
                           for p, v in m.curves.items()])
        offsets = line_chart(frame, x="offset k", y=measure, color="from position",
                             title="Similarity of position p with p + k", height=420)
    waves = None
    if m.wavelengths is not None:
        pairs = np.arange(len(m.wavelengths))
        frame = pd.concat([
            pd.DataFrame({"dimension pair i": pairs, "wavelength (positions)": m.wavelengths,
                          "line": "wavelength of pair i"}),
            pd.DataFrame({"dimension pair i": pairs[[0, -1]], "wavelength (positions)": float(n_rows),
                          "line": f"{n_rows} positions shown"}),
        ])
        waves = line_chart(frame, x="dimension pair i", y="wavelength (positions)", color="line", log_y=True,
                           title="Wavelength per sin/cos pair (log)", height=400, legend_title=False)
    return PositionFigures(matrix, similarity, offsets, waves)


@dataclass(frozen=True)
class ModelFigures:
    shuffle: go.Figure | None  # outputs before, after and their difference
    summary: pd.DataFrame  # one row per shipped model
    attention: go.Figure | None  # the chosen attention of every model, side by side


def model_figures(view) -> ModelFigures:
    shuffle, n = view.shuffle, len(view.tokens)
    figure = None
    if shuffle is not None:
        before = [f"{p} · {t}" for p, t in enumerate(shuffle.tokens)]
        after = [f"{p} · {t}" for p, t in enumerate(shuffle.shuffled_tokens)]
        scale = float(max(np.abs(shuffle.before).max(), np.abs(shuffle.after).max()))
        figure = panel_grid([shuffle.before, shuffle.after, shuffle.difference],
                            titles=["outputs, original order", "outputs, shuffled input",
                                    "shuffled − original, same token"],
                            row_labels=[before, after, after], x_title="dimension", y_title="position",
                            value_name="output", zmin=-scale, zmax=scale, columns=3, panel_height=60 + 34 * n)
    runs = view.runs
    summary = pd.DataFrame({
        "encoding": list(runs),
        "answer": [" ".join(run.answer) for run in runs.values()],
        "right?": ["yes" if run.correct else "no" for run in runs.values()],
        "held-out accuracy": [run.heldout_accuracy for run in runs.values()],
        "shuffle difference": [view.differences[e] for e in runs],
    })
    attention = None
    if view.panels:
        block = view.settings.block
        blocks = [run.view.blocks[{"encoder": 0, "decoder": 1, "cross": 2}[block]] for run in runs.values()]
        attention = panel_grid(list(view.panels),
                               titles=[f"{e} · {'right' if run.correct else 'wrong'}" for e, run in runs.items()],
                               row_labels=[b.query_tokens for b in blocks], col_labels=[b.key_tokens for b in blocks],
                               x_title="key", y_title="query", value_name="weight", scale=SEQUENTIAL, zmin=0.0,
                               zmax=1.0, columns=3, panel_height=110 + 26 * n, number_format=".2f", label_size=14)
    return ModelFigures(figure, summary, attention)


@dataclass(frozen=True)
class RelativeFigures:
    left: go.Figure  # RoPE's angles, ALiBi's biases, T5's buckets
    right: alt.Chart | None  # RoPE's scores by offset, T5's bucket by offset


def relative_figures(view) -> RelativeFigures:
    scheme = view.settings.scheme
    if scheme == "RoPE":
        plan = view.rope_plan
        angles = matrix_heatmap(view.rope_degrees, row_values=plan.rows, col_values=plan.cols,
                                x_title="dimension pair", y_title="position", value_name="angle (°)",
                                title="Rotation of each pair, modulo 360°", zmin=-180.0, zmax=180.0,
                                number_format=".0f", height=460)
        frame = pd.concat([pd.DataFrame({"offset (key − query)": view.rope_offsets, "score q·k": row,
                                         "query at": f"position {m}"})
                           for m, row in zip(view.rope_queries, view.rope_scores, strict=True)])
        scores = line_chart(frame, x="offset (key − query)", y="score q·k", color="query at",
                            title="Score of the same q and k at every offset", height=460)
        return RelativeFigures(angles, scores)
    if scheme == "ALiBi":
        heads = len(view.alibi_slopes)
        columns = 4 if heads >= 4 else heads
        bias = panel_grid(list(view.alibi_bias),
                          titles=[f"head {h + 1} · slope {s}" for h, s in enumerate(view.alibi_labels)],
                          x_title="key position", y_title="query position", value_name="bias", columns=columns,
                          panel_height=max(220, 1200 // columns - 60), number_format=".3f", label_size=13)
        return RelativeFigures(bias, None)
    n_buckets = view.settings.t5_buckets
    buckets = matrix_heatmap(view.t5_buckets, x_title="key position", y_title="query position", value_name="bucket",
                             title="Bucket of each (query, key) pair", scale=SEQUENTIAL, zmin=0, zmax=n_buckets - 1,
                             number_format=".0f", height=460)
    steps = line_chart(pd.DataFrame({"offset (key − query)": view.t5_offsets, "bucket": view.t5_steps}),
                       x="offset (key − query)", y="bucket", step=True, number_format=".0f",
                       title="Bucket against offset", height=460)
    return RelativeFigures(buckets, steps)
