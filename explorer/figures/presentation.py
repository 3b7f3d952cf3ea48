"""Figures for the back of a lecture hall: every font of a finished figure raised to a minimum size.

Works on the plain dicts the app sends (a Plotly figure's JSON, a Vega-Lite spec), so one rule covers
every figure builder: presentation mode calls these on whatever a page draws.
"""

from __future__ import annotations

import copy
import math

from .common import PRESENT_AXES, PRESENT_HEIGHT, PRESENT_VEGA
from .margins import PLOTLY_MARGIN, SAFETY, fit_margins, text_lines

__all__ = ["PRESENT_FONT_PX", "enlarge_plotly", "enlarge_vega_lite"]

PRESENT_FONT_PX = 18  # the smallest text a figure shows in presentation mode
_PLOTLY_FONT_KEYS = ("font", "tickfont", "titlefont", "textfont", "insidetextfont", "outsidetextfont")
PLOTLY_LINE_SPACING = 1.3  # plotly.js's own: each line of a text is 1.3 em below the one before
_VEGA_FONT_KEYS = ("fontSize", "labelFontSize", "titleFontSize", "subtitleFontSize")


def _raise_plotly_fonts(node, minimum: int) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _PLOTLY_FONT_KEYS and isinstance(value, dict):
                size = value.get("size")
                if isinstance(size, (int, float)) and size < minimum:
                    value["size"] = minimum
                elif isinstance(size, list):  # per-point sizes
                    value["size"] = [max(s, minimum) if isinstance(s, (int, float)) else s for s in size]
            elif key != "hoverlabel":
                _raise_plotly_fonts(value, minimum)
    elif isinstance(node, list):
        for item in node:
            _raise_plotly_fonts(item, minimum)


def _at_least(holder: dict, key: str, size: int) -> None:
    """holder[key] is a font dict whose size is at least `size` (set explicitly: the theme a chart
    is drawn with may give axis titles, legends and colour bars smaller sizes of its own)."""
    font = holder.setdefault(key, {})
    font["size"] = max(font.get("size") or 0, size)


def _titled(holder: dict, size: int) -> None:
    title = holder.get("title")
    if isinstance(title, str):
        holder["title"] = title = {"text": title}
    if isinstance(title, dict):
        _at_least(title, "font", size)


def _colour_bar(bar: dict, minimum: int) -> None:
    _at_least(bar, "tickfont", minimum)
    _titled(bar, minimum)


def enlarge_plotly(spec: dict, minimum: int = PRESENT_FONT_PX) -> dict:
    """A copy of a Plotly figure dict whose text is at least `minimum` px: the default font, every
    axis's ticks and title, colour bars, the legend, annotations, and every explicit size below it;
    drawn at the figure's presentation height if it names one (`layout.meta`, PRESENT_HEIGHT; its axes
    as PRESENT_AXES says, if it says), its margins worked out again for the larger text
    (explorer/figures/margins.py)."""
    spec = copy.deepcopy(spec)
    layout = spec.setdefault("layout", {})
    _at_least(layout, "font", minimum + 2)
    _at_least(layout.setdefault("legend", {}), "font", minimum)
    for name, part in layout.items():
        if name.startswith(("xaxis", "yaxis")) and isinstance(part, dict):
            _at_least(part, "tickfont", minimum)
            _titled(part, minimum + 2)
        elif name.startswith("coloraxis") and isinstance(part, dict):
            _colour_bar(part.setdefault("colorbar", {}), minimum)
    for annotation in layout.get("annotations", []):
        _at_least(annotation, "font", minimum)
    for trace in spec.get("data", []):
        if isinstance(trace.get("colorbar"), dict) or (trace.get("showscale") and "coloraxis" not in trace):
            _colour_bar(trace.setdefault("colorbar", {}), minimum)
    _raise_plotly_fonts(spec, minimum)
    meta = layout.get("meta")
    if isinstance(meta, dict) and isinstance(meta.get(PRESENT_HEIGHT), (int, float)):
        layout["height"] = meta[PRESENT_HEIGHT]  # the figure's own height for one projected screen
    if isinstance(meta, dict) and isinstance(meta.get(PRESENT_AXES), dict):
        for name, entries in meta[PRESENT_AXES].items():  # its ticks thinned for that height
            layout.setdefault(name, {}).update(entries)
    spec = fit_margins(spec)  # room for the larger labels, worked out again
    need = _titles_above(spec["layout"])
    if need > (spec["layout"].get("margin") or {}).get("t", PLOTLY_MARGIN["t"]):  # else left as it is (a theme's)
        spec["layout"].setdefault("margin", {})["t"] = need
    return spec


def _titles_above(layout: dict) -> int:
    """The top margin (px) the panel titles standing on the plot area need, every line of them at their
    size: annotations in paper coordinates with their bottom at y ≥ 1 (two-line titles at the
    projector's size reached past the chart's top)."""
    height, margin = layout.get("height"), {**PLOTLY_MARGIN, **(layout.get("margin") or {})}
    plot_px = max(0.0, float(height) - margin["t"] - margin["b"]) if height else 0.0
    default = (layout.get("font") or {}).get("size") or 12
    need = 0.0
    for note in layout.get("annotations") or []:
        y = float(note.get("y", 0.0))
        if note.get("xref", "paper") != "paper" or note.get("yref", "paper") != "paper" or \
                note.get("yanchor") != "bottom" or y < 1:
            continue
        lines = len(text_lines(note.get("text", "")))
        size = (note.get("font") or {}).get("size") or default
        need = max(need, (y - 1) * plot_px + lines * PLOTLY_LINE_SPACING * size + SAFETY)
    return math.ceil(need)


def _raise_vega_fonts(node, minimum: int) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in _VEGA_FONT_KEYS and isinstance(value, (int, float)) and value < minimum:
                node[key] = minimum
            else:
                _raise_vega_fonts(value, minimum)
        if node.get("type") == "text" or node.get("mark") == "text":  # a text mark's own size
            size = node.get("size")
            if isinstance(size, (int, float)) and size < minimum:
                node["size"] = minimum
    elif isinstance(node, list):
        for item in node:
            _raise_vega_fonts(item, minimum)


def enlarge_vega_lite(spec: dict, minimum: int = PRESENT_FONT_PX) -> dict:
    """A copy of a Vega-Lite spec whose text is at least `minimum` px: config defaults for axes,
    legends, titles, facet headers and text marks, and every explicit size below the minimum; and its
    layout for a projector, if it names one (`usermeta`, PRESENT_VEGA)."""
    spec = copy.deepcopy(spec)
    config = spec.setdefault("config", {})
    present = (spec.get("usermeta") or {}).get(PRESENT_VEGA) or {}
    spec.update(present.get("spec") or {})
    config.setdefault("legend", {}).update(present.get("legend") or {})
    for part, sizes in {
        "axis": {"labelFontSize": minimum, "titleFontSize": minimum + 2},
        "legend": {"labelFontSize": minimum, "titleFontSize": minimum},
        "header": {"labelFontSize": minimum, "titleFontSize": minimum + 2},
        "title": {"fontSize": minimum + 4, "subtitleFontSize": minimum},
        "text": {"fontSize": minimum},
    }.items():
        section = config.setdefault(part, {})
        for key, size in sizes.items():
            section[key] = max(section.get(key) or 0, size)
    _raise_vega_fonts(spec, minimum)
    return spec
