"""Vega-Lite (Altair) charts' shared look: large fonts, stroke legends, and legends laid out for the
width the chart is drawn at (a desk's column, a projector, a 390 px phone)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence

import altair as alt

from .common import FONT_SIZE

__all__ = ["PHONE_LEGEND_PX", "colour_encoding", "configure", "one_row_if_it_fits", "phone_columns", "phone_names"]

PHONE_LEGEND_PX = 500  # a Vega-Lite chart narrower than this (a phone's) lays its legend out in fewer columns


# A legend label's longest drawn width: on a phone's chart, what the chart leaves beside its symbol (the
# rest is cut to "…"); the stopwatch's "tanh RNN, this app's RecurrentNet (loop over T in Python)" ran
# past a 390 px phone's chart edge.
PHONE_LABEL_LIMIT = {"expr": f"width < {PHONE_LEGEND_PX} ? max(width - 40, 120) : 600"}


def phone_columns(desk: int, phone: int) -> dict:
    """A legend's `columns` that follow the chart's drawn width (Vega's `width` signal): `desk` columns
    (0: all entries in one row), `phone` on a chart under PHONE_LEGEND_PX.  A row of entries sized for the
    desk ran past a 390 px phone's chart edge ("raw index", "ALiBi" cut on the length lesson)."""
    return {"expr": f"width < {PHONE_LEGEND_PX} ? {phone} : {desk}"}


def one_row_if_it_fits(labels: Sequence[str], font_px: float) -> dict:
    """A legend's `columns`: all entries in one row (0) where the chart's drawn width holds them (a stroke
    symbol and 0.62 em a character each), else one entry per row.  `phone_columns`'s fixed width stacked
    three short entries in a 440 px half of the desk's page."""
    row_px = sum(40 + 0.62 * font_px * len(str(label)) for label in labels)
    return {"expr": f"width < {math.ceil(row_px)} ? 1 : 0"}


def configure(chart, *, legend_orient: str = "top", legend_columns: int | None = None):
    legend = {"columns": legend_columns} if legend_columns else {}
    return (
        chart.configure_axis(labelFontSize=FONT_SIZE, titleFontSize=FONT_SIZE, titleFontWeight="normal")
        .configure_legend(labelFontSize=FONT_SIZE, titleFontSize=FONT_SIZE, orient=legend_orient,
                          labelLimit=PHONE_LABEL_LIMIT, symbolType="stroke", symbolStrokeWidth=4, symbolSize=300,
                          symbolOpacity=1, **legend)
        .configure_title(fontSize=FONT_SIZE + 2, anchor="start")
        .configure_view(strokeWidth=0)
    )


def phone_names(short: Mapping[str, str]) -> str:
    """A legend's `labelExpr`: each label named by `short` (label → a shorter name) on a chart under
    PHONE_LEGEND_PX, whole elsewhere.  The stopwatch's three names were cut to "…" on a phone, their
    differences lost ("torch.nn.RNN (loop ov…")."""
    return f"width < {PHONE_LEGEND_PX} ? ({json.dumps(dict(short))}[datum.label] || datum.label) : datum.label"


def colour_encoding(field: str, labels: Sequence[str], colours: dict[str, str], title: str | None = None,
                    phone: Mapping[str, str] | None = None):
    """Colour by `field`, `labels` in order; `phone`: shorter names for the legend on a phone (`phone_names`)."""
    legend = alt.Legend(labelExpr=phone_names(phone)) if phone else alt.Undefined
    return alt.Color(f"{field}:N", title=title, sort=list(labels), legend=legend,
                     scale=alt.Scale(domain=list(labels), range=[colours[label] for label in labels]))
