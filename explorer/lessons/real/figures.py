"""The real-model lesson's figures, made once per setting from its views (explorer.lessons.real.view),
read by attribute (figures import no other layer)."""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go

from explorer.figures.heads import attention_lines, head_heatmap
from explorer.figures.matrices import matrix_heatmap
from explorer.lessons.real.charts import head_overview, head_score_map, pair_figure

__all__ = ["RealFigures", "ReferentFigures", "TableFigures", "real_figures", "referent_figures", "table_figures"]


@dataclass(frozen=True)
class RealFigures:
    overview: go.Figure  # every head, the chosen one framed
    enlarged: go.Figure  # the chosen head, large, its row of "it" framed (head_heatmap)
    lines: go.Figure  # the chosen head as lines: its row of "it" and every weight of it, or every row
    pair: go.Figure  # the chosen head on the lecture's pair, and the difference


def real_figures(view) -> RealFigures:
    layer, head = view.settings.layer - 1, view.settings.head - 1
    text, tired, wide = view.text, view.tired, view.wide
    overview = head_overview(text.weights, text.tokens, selected=(layer, head))
    it = text.index("it")
    enlarged = head_heatmap(text.weights[layer, head], text.tokens, text.tokens, focus_row=it)
    # One head's row of "it": every weight it quotes (the street's 0.0x too) printed beside its key.
    lines = attention_lines(text.weights[layer, [head]], text.tokens, text.tokens, head=0, focus_row=it,
                            printed=0.02, head_numbers=[head + 1])
    pair = pair_figure(tired.weights[layer, head], wide.weights[layer, head], tired.tokens, wide.tokens,
                       ("tired", "wide"))
    return RealFigures(overview, enlarged, lines, pair)


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
