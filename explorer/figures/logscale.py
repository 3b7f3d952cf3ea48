"""Log10 values drawn on linear axes: gradient norms and the like are plotted as log10 values whose
ticks read 10⁻²⁰, 10⁻¹⁰, 1 … in superscript, not a program's "1e-20" (`log_axis` for Altair, `log_strip`
and `log_colorbar` for Plotly): a
vanishing gradient can go below float64's smallest number (≈ 1e−308), which a true log scale (or a
browser) cannot draw.
"""

from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import plotly.graph_objects as go

from .common import FONT_SIZE, SEQUENTIAL, figure_from_spec, plotly_text
from .margins import TOOLBAR_PX

__all__ = ["LOG_LABEL", "SUPERSCRIPTS", "log_axis", "log_colorbar", "log_range", "log_strip", "log_ticks",
           "power_label"]

SUPERSCRIPTS = dict(zip("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹", strict=True))


def power_label(k: int) -> str:
    """10 to the power k as a reader writes it: 1 (k = 0), 10 (k = 1), 10⁻²⁰, 10²."""
    return {0: "1", 1: "10"}.get(k) or "10" + "".join(SUPERSCRIPTS[c] for c in str(k))


def _superscript_expr(text: str) -> str:
    for plain, raised in SUPERSCRIPTS.items():
        text = f"replace({text}, regexp('{plain}', 'g'), '{raised}')"
    return text


# A Vega-Lite tick at log10 = k reads power_label(k): "10⁻²⁰", "1", "10"
LOG_LABEL = (f"datum.value == 0 ? '1' : datum.value == 1 ? '10' : "
             f"'10' + {_superscript_expr('toString(datum.value)')}")


def log_axis(title: str) -> alt.Axis:
    return alt.Axis(title=title, labelExpr=LOG_LABEL, tickMinStep=1, format="d")


def log_range(values: np.ndarray) -> tuple[float, float]:
    """Whole powers of ten around the finite log10 values: (floor of the least, ceil of the greatest),
    at least one apart; (−1, 0) when none is finite."""
    finite = values[np.isfinite(values)]
    low, high = (float(np.floor(finite.min())), float(np.ceil(finite.max()))) if finite.size else (-1.0, 0.0)
    return low, max(high, low + 1)


def log_ticks(low: float, high: float) -> dict:
    """A Plotly axis's (or colour bar's) ticks for log10 values from low to high: at most 9, on whole
    powers of ten a round number of them apart (1, 2, 5, 10, … orders), reading 10⁻²⁰ … 1."""
    span = high - low
    step = next((s for s in (1, 2, 5, 10, 20, 50, 100) if span / s <= 8), max(1, int(np.ceil(span / 8))))
    first = int(np.ceil(low / step)) * step
    ticks = list(range(first, int(np.floor(high)) + 1, step)) or [round(low)]
    return {"tickmode": "array", "tickvals": ticks, "ticktext": [power_label(v) for v in ticks]}


def log_colorbar(low: float, high: float, title: str, side: str = "right") -> dict:
    """A colour bar for log10 values from low to high, at most 9 ticks reading 10⁻²⁰ … 1.  Its title
    stands beside it (as most colour bars' in the app), or on top (`side`) where the figure has no
    room beside it (its panels' titles need the width on a phone) and its top is clear of the toolbar."""
    return {"title": {"text": title, "side": side}, "thickness": 18, **log_ticks(low, high),
            "tickfont": {"size": FONT_SIZE - 2}}


def log_strip(z: np.ndarray, *, rows: Sequence[str], x_title: str, value_title: str, height: int | None = None,
              hover_x: str = "x") -> go.Figure:
    """A (rows × positions) heatmap of log10 values (NaN = exactly zero, drawn blank), the row
    labels on the left, one colour bar whose ticks read 10⁻²⁰ … 1."""
    z = np.asarray(z, dtype=np.float64)
    low, high = log_range(z)
    trace = {
        "type": "heatmap", "z": z, "x": list(range(z.shape[1])), "y": list(range(z.shape[0])),
        "colorscale": SEQUENTIAL, "zmin": low, "zmax": high, "xgap": 0, "ygap": 2,
        "colorbar": log_colorbar(low, high, value_title),
        "customdata": np.array([[plotly_text(r)] * z.shape[1] for r in rows]),
        "hovertemplate": f"%{{customdata}}, {hover_x} = %{{x}}<br>log10 = %{{z:.1f}}<extra></extra>",
    }
    layout = {
        "font": {"size": FONT_SIZE}, "height": height or 112 + TOOLBAR_PX + 44 * len(rows),
        "margin": {"l": 10, "r": 10, "t": TOOLBAR_PX + 2, "b": 10},  # the colour bar's top under the toolbar
        "plot_bgcolor": "rgba(0,0,0,0)",
        "xaxis": {"title": {"text": x_title}, "showgrid": False, "zeroline": False,
                  "tickfont": {"size": FONT_SIZE - 2}},
        "yaxis": {"tickmode": "array", "tickvals": list(range(len(rows))),
                  "ticktext": [plotly_text(r) for r in rows], "autorange": "reversed", "showgrid": False,
                  "zeroline": False, "tickfont": {"size": FONT_SIZE}},
    }
    return figure_from_spec({"data": [trace], "layout": layout})
