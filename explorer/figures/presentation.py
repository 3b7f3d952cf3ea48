"""Figures for the back of a lecture hall: every font of a finished figure raised to a minimum size.

Works on the plain dicts the app sends (a Plotly figure's JSON, a Vega-Lite spec), so one rule covers
every figure builder: presentation mode calls these on whatever a page draws.
"""

from __future__ import annotations

import copy

__all__ = ["PRESENT_FONT_PX", "enlarge_plotly", "enlarge_vega_lite"]

PRESENT_FONT_PX = 18  # the smallest text a figure shows in presentation mode
_PLOTLY_FONT_KEYS = ("font", "tickfont", "titlefont", "textfont", "insidetextfont", "outsidetextfont")
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


def enlarge_plotly(spec: dict, minimum: int = PRESENT_FONT_PX) -> dict:
    """A copy of a Plotly figure dict whose text is at least `minimum` px: the default font (which
    every unset size inherits) and every explicit size below it, in titles, ticks, colour bars,
    legends and annotations."""
    spec = copy.deepcopy(spec)
    layout = spec.setdefault("layout", {})
    font = layout.setdefault("font", {})
    font["size"] = max(font.get("size") or 0, minimum + 2)
    _raise_plotly_fonts(spec, minimum)
    return spec


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
    legends, titles, facet headers and text marks, and every explicit size below the minimum."""
    spec = copy.deepcopy(spec)
    config = spec.setdefault("config", {})
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
