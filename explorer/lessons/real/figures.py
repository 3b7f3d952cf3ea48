"""The real-model lesson's figures, made once per setting from its views (explorer.lessons.real.view),
read by attribute (figures import no other layer)."""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go

from explorer.figures.common import heatmap
from explorer.figures.matrices import matrix_heatmap
from explorer.lessons.real.charts import head_overview, head_score_map, pair_figure

__all__ = ["RealFigures", "ReferentFigures", "TableFigures", "real_figures", "referent_figures", "table_figures"]


@dataclass(frozen=True)
class RealFigures:
    overview: go.Figure  # every head, the chosen one framed
    enlarged: go.Figure  # the chosen head
    pair: go.Figure  # the chosen head on the lecture's pair, and the difference


def real_figures(view) -> RealFigures:
    layer, head = view.settings.layer - 1, view.settings.head - 1
    text, tired, wide = view.text, view.tired, view.wide
    overview = head_overview(text.weights, text.tokens, selected=(layer, head))
    enlarged = heatmap(text.weights[layer, head], x_labels=text.tokens, y_labels=text.tokens,
                       title=f"Layer {layer + 1}, head {head + 1} (framed above)", zmin=0, zmax=1, annotate=False,
                       height=560)
    pair = pair_figure(tired.weights[layer, head], wide.weights[layer, head], tired.tokens, wide.tokens,
                       ("tired", "wide"))
    return RealFigures(overview, enlarged, pair)


@dataclass(frozen=True)
class ReferentFigures:
    map: go.Figure


def referent_figures(view) -> ReferentFigures:
    split = view.settings.split
    return ReferentFigures(head_score_map(view.shares, title=f"% of sentences where “it” weighs the right noun more"
                                                            f"<br>({split})", value_name="right noun above",
                                          highlight=view.top))


@dataclass(frozen=True)
class TableFigures:
    learned: go.Figure
    sinusoidal: go.Figure


def table_figures(view) -> TableFigures:
    n, d = view.shape
    return TableFigures(*(
        matrix_heatmap(table, row_values=view.rows, col_values=view.cols, x_title="dimension", y_title="position",
                       value_name="value", zmin=-bound, zmax=bound, title=f"{name}: {n} × {d}", height=520)
        for name, table, bound in (("learned by MiniLM", view.learned, view.clip),
                                   ("sinusoidal (the paper)", view.sinusoidal, 1.0))))
