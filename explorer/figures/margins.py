"""A figure's margins worked out here, so that the browser draws it in one pass.

Plotly's `automargin` (on for every axis in Streamlit's theme) measures the tick labels once the
figure is drawn, widens the margins to hold them and draws the figure again: that second pass is
about half of what drawing a heatmap of tokens costs the browser (benchmarks/RESULTS.md, phase
browser-speed).  When every labelled axis of a figure labels its ticks with text we know — tokens
(`token_axis`), or no tick labels at all — the room they need is worked out from the text instead,
and the figure asks for it as its margins with `automargin` off.  A figure with any other labelled
axis (numbers Plotly picks) is left to `automargin`.

Widths are estimated on the generous side (a label's characters at 0.68 em, capitals and wide
letters more): a margin a few pixels wider than needed costs nothing, a label cut off at the edge is
unreadable.  tests/browser/test_legibility_browser.py checks in Chromium that no tick label or axis
title of any lesson's figures is cut off by the edge of its chart.
"""

from __future__ import annotations

import copy
import html
import itertools
import math
import re

__all__ = ["FITTED", "PHONE_GRID_PX", "TITLE_AXES", "TOOLBAR_PX", "column_gap", "fit_margins", "label_width",
           "phone_width", "text_lines"]

FITTED = "fitted_margins"  # layout.meta key: the figure's own margins before fitting (fitted again when enlarged)
TITLE_AXES = "title_axes"  # layout.meta key: the horizontal axes whose tick labels are panel titles (`phone_width`)
# The chart's toolbar (camera and full screen, always shown: explorer/kit/present.py) stands in the top
# right corner, over whatever the figure draws there: a figure with text at its top (a title, panel
# titles, a top axis, a colour bar's top) leaves this band above it free.
TOOLBAR_PX = 32
PAD = 8  # px between the plot area and the axis (Streamlit's theme sets margin.pad 8; fixed here)
LABEL_GAP = 4  # px between an axis and its tick labels
LINE = 1.5  # a line of text, in em, generously
SAFETY = 6  # px of margin beyond the labels' reach
PLOTLY_MARGIN = {"l": 80, "r": 80, "t": 100, "b": 80}  # Plotly's own margins, for a side a figure leaves out
_NARROW, _WIDE = set("ijlrtfI.,:;'!|()[] "), set("mwMWQGOD@%#&")
TITLE_GAP = 8  # px between two panel titles side by side
_MARKUP = re.compile(r"</?(?:span|b|i|em|sub|sup|br)\b[^>]*>")  # Plotly's text markup, not drawn as text


def text_lines(text) -> list[str]:
    """The lines of a Plotly text (split at its `<br>` tags)."""
    return re.split(r"<br\s*/?>", str(text))


def label_width(text: str, size: float) -> float:
    """The width in px of `text` (HTML entities read as their character) at `size` px, generously."""
    text = html.unescape(str(text))
    em = sum(0.42 if c in _NARROW else 1.0 if c in _WIDE else 0.85 if c.isupper() else
             0.68 if c.isascii() else 1.1 for c in text)
    return em * size + 2


PHONE_GRID_PX = 400  # a grid's plot area in a phone's 600 px chart (the first row labels and a colour bar beside it)


def column_gap(labels, size: float, minimum: float = 0.06) -> float:
    """The gap (paper width) between two columns of a grid of panels that holds the right panel's row
    labels (`labels`, at `size` px) clear of the panel to its left at a phone's width (PHONE_GRID_PX;
    wider screens have more room), and at least `minimum`.  A fixed 0.06 (24 px there) let row labels
    ("<s>", "0 · C", "21") stand over the panel to their left at 390 px."""
    widest = max((label_width(t, size) for t in labels), default=0.0)
    return max(minimum, (widest + LABEL_GAP + PAD + SAFETY) / PHONE_GRID_PX)


def _size(font: dict | None, default: float) -> float:
    return float((font or {}).get("size") or default)


def _title(axis: dict) -> tuple[str, dict]:
    title = axis.get("title")
    if isinstance(title, str):
        return title, {}
    if isinstance(title, dict):
        return str(title.get("text") or ""), title
    return "", {}


def _labels(axis: dict) -> list[str] | None:
    """The axis's tick labels, [] if it shows none, None if Plotly picks them (numbers)."""
    if axis.get("visible") is False or axis.get("showticklabels") is False:
        return []
    if axis.get("tickmode") == "array" and axis.get("ticktext") is not None:
        return [str(t) for t in axis["ticktext"] if str(t)]
    return None


def _extent(axis: dict, horizontal: bool, base_size: float) -> tuple[float, float]:
    """How far the axis's labels and title reach out from the plot area (px), and, for a horizontal
    axis with slanted labels, how far they reach sideways past its start."""
    size = _size(axis.get("tickfont"), base_size)
    labels = _labels(axis)
    widths = [label_width(t, size) for t in labels] if labels else []
    reach, sideways = PAD, 0.0
    if widths:
        if not horizontal:
            reach += LABEL_GAP + max(widths)
        elif axis.get("tickangle") in (0, None):  # as many lines as its tallest label (staggered labels: 2–3)
            reach += LABEL_GAP + LINE * size * max(len(text_lines(t)) for t in labels)
        else:
            slant = math.radians(abs(float(axis["tickangle"])))
            reach += LABEL_GAP + max(widths) * math.sin(slant) + size * math.cos(slant)
            sideways = widths[0] * math.cos(slant)
    text, title = _title(axis)
    if text:
        reach += LINE * _size(title.get("font"), base_size) + 12  # Plotly sets a title ~10 px off its labels
    return reach + SAFETY, sideways


def tick_reach(labels, size: float, angle: float = 0) -> float:
    """How far a horizontal axis's tick labels (no title) at `size` px, drawn at `angle`, reach out
    from the plot area (px): what `fit_margins` leaves for them."""
    axis = {"tickmode": "array", "ticktext": list(labels), "tickfont": {"size": size}, "tickangle": angle}
    return _extent(axis, True, size)[0]


def _axes(layout: dict) -> dict[str, dict]:
    return {name: axis for name, axis in layout.items()
            if name.startswith(("xaxis", "yaxis")) and isinstance(axis, dict)}


def _title_band(layout: dict, base_size: float) -> float:
    """How far down from the chart's top edge its title reaches (px): a top axis's labels and title stand
    under it ("15 letters (never seen)" and "input letter read" were drawn on one line).  Plotly sets a
    title at `y` (a fraction of the chart's height) by its top; a title placed by Plotly itself (no `y`)
    or a chart of no set height is left as it was."""
    text, title = _title(layout)
    height, y = layout.get("height"), title.get("y")
    if not text or not isinstance(height, (int, float)) or not isinstance(y, (int, float)):
        return 0.0
    top = (1.0 - float(y)) * float(height)
    return top + LINE * _size(title.get("font"), base_size) * len(text_lines(text))


def fit_margins(spec: dict) -> dict:
    """`spec` (a Plotly figure's dict) with its margins worked out and `automargin` off, when every
    labelled axis has known labels (see the module); otherwise `spec` itself, unchanged.  A spec
    fitted before is fitted again from its own margins (presentation mode enlarges its fonts)."""
    if not (axes := _axes(spec.get("layout") or {})) or any(_labels(axis) is None for axis in axes.values()):
        return spec
    spec = copy.deepcopy(spec)
    layout = spec["layout"]
    axes = _axes(layout)
    meta = layout.get("meta") if isinstance(layout.get("meta"), dict) else {}
    base = dict(meta.get(FITTED) or layout.get("margin") or {})
    margin = {side: float(base.get(side, default)) for side, default in PLOTLY_MARGIN.items()}
    base_size = _size(layout.get("font"), 12)
    title_band = _title_band(layout, base_size)
    for name, axis in axes.items():
        horizontal = name.startswith("x")
        anchor = str(axis.get("anchor") or ("y" if horizontal else "x"))
        anchor_name = ("yaxis" if horizontal else "xaxis") + anchor[1:]
        across = axes.get(anchor_name, {}).get("domain", [0.0, 1.0])  # the span of the other axis: where this one sits
        reach, sideways = _extent(axis, horizontal, base_size)
        if horizontal:
            top = axis.get("side") == "top"
            if (top and across[1] >= 0.999) or (not top and across[0] <= 0.001):
                side = "t" if top else "b"
                margin[side] = max(margin[side], reach + (title_band if top else 0.0))
            if sideways and axis.get("domain", [0.0, 1.0])[0] <= 0.001:
                margin["l"] = max(margin["l"], sideways + PAD)
        else:
            right = axis.get("side") == "right"
            if (right and across[1] >= 0.999) or (not right and across[0] <= 0.001):
                side = "r" if right else "l"
                margin[side] = max(margin[side], reach)
        axis["automargin"] = False
    layout["margin"] = {**{k: v for k, v in (layout.get("margin") or {}).items() if k not in "lrtb"},
                        **{side: math.ceil(value) for side, value in margin.items()}, "pad": PAD}
    layout["meta"] = {**meta, FITTED: {side: base[side] for side in "lrtb" if side in base}}
    return spec


def _placed_titles(axis: dict, base_size: float) -> list[tuple[float, float]]:
    """Panel titles drawn as a horizontal axis's tick labels, upright at known values of a known range,
    as (where in paper coordinates, width px); [] if the axis does not place them so."""
    values, texts, span = axis.get("tickvals"), axis.get("ticktext"), axis.get("range")
    if axis.get("tickmode") != "array" or axis.get("tickangle") != 0 or axis.get("showticklabels") is False \
            or not values or not texts or not span or len(span) != 2 or span[0] == span[1]:
        return []
    (start, end), size = axis.get("domain", [0.0, 1.0]), _size(axis.get("tickfont"), base_size)
    return [(start + (float(v) - span[0]) / (span[1] - span[0]) * (end - start), label_width(t, size))
            for v, t in zip(values, texts, strict=False) if str(t).strip()]


def phone_width(spec: dict) -> int:
    """The narrowest width (px) of the chart at which its panel titles side by side — annotations at
    one height, in paper coordinates, or the tick labels of an axis `layout.meta` names in TITLE_AXES —
    do not run into each other; 0 for a figure without two on a row.  A phone scrolls such a chart
    sideways at this width (explorer/kit/present.py)."""
    layout = spec.get("layout") or {}
    margin = {**PLOTLY_MARGIN, **{k: v for k, v in (layout.get("margin") or {}).items() if k in "lrtb"}}
    base_size = _size(layout.get("font"), 12)
    rows: dict[float | str, list[tuple[float, float]]] = {}
    for note in layout.get("annotations") or []:
        if note.get("xref", "paper") != "paper" or note.get("yref", "paper") != "paper" or note.get("textangle"):
            continue
        lines = text_lines(note.get("text", ""))  # a title on lines: its longest line
        width = max(label_width(_MARKUP.sub("", line), _size(note.get("font"), base_size)) for line in lines)
        rows.setdefault(round(float(note.get("y", 0.0)), 3), []).append((float(note.get("x", 0.5)), width))
    meta = layout.get("meta") if isinstance(layout.get("meta"), dict) else {}
    for name in meta.get(TITLE_AXES) or ():
        if ticks := _placed_titles(layout.get(name) or {}, base_size):
            rows[name] = ticks
    need = 0.0  # px of plot area the closest pair of titles needs
    for row in rows.values():
        row.sort()
        for (x0, w0), (x1, w1) in itertools.pairwise(row):
            if x1 > x0:
                need = max(need, ((w0 + w1) / 2 + TITLE_GAP) / (x1 - x0))
    return math.ceil(float(margin["l"]) + float(margin["r"]) + need) if need else 0
