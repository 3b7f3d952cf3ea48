"""The lookup lesson's figures: the scores and the weights as bars, every key's row as a table, and
the weights of many queries as a matrix.  Data in (the lesson's view), Plotly and pandas out."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import plotly.graph_objects as go

from explorer.figures import common

__all__ = ["LookupFigures", "lookup_figures"]


@dataclass(frozen=True)
class LookupFigures:
    scores: go.Figure
    weights: go.Figure
    table: pd.DataFrame  # one row per key: the key, its value, score, softmax input, weight
    matrix: go.Figure  # one row of weights per query (the query, then each key as a query)


def lookup_figures(view) -> LookupFigures:
    """`view`: explorer.lessons.lookup.view.LookupView (keys, values, key_labels, result, stacked, query_labels)."""
    result, labels = view.result, list(view.key_labels)
    scores = common.bar_chart(labels, result.scores, title="Scores q·k", value_title="score")
    weights = common.bar_chart(labels, result.weights, title="Weights after softmax", value_title="weight",
                               domain=(0.0, 1.15), color="#21918c")
    table = pd.DataFrame(
        {
            "key": [", ".join(f"{x:g}" for x in k) for k in view.keys],
            "value": [", ".join(f"{x:g}" for x in v) for v in view.values],
            "score q·k": result.scores,
            "softmax input": result.scaled_scores,
            "weight": result.weights,
        },
        index=labels,
    )
    if result.scale == 1.0:
        table = table.drop(columns="softmax input")
    matrix = common.heatmap(view.stacked.weights, x_labels=labels, y_labels=list(view.query_labels), x_title="key",
                            y_title="query", value_name="weight", zmin=0.0, zmax=1.0,
                            title="Softmax weights, one row per query")
    return LookupFigures(scores, weights, table, matrix)
