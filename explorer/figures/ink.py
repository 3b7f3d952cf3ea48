"""The colour of a figure's words: near black, whatever the chart theme says.

Streamlit's chart themes draw tick labels, axis titles and legends in a grey (#808495 on white,
3.7:1), under WCAG AA's 4.5:1 for text and washed out further by a projector.  Every figure's text
that stands on the page's white — its default font, its axes' tick labels and titles, its legend,
its colour bars, its annotations that name no colour of their own — is set to INK here, once, as
the figure is frozen (Plotly: `inked`, in explorer/figures/common.py FrozenFigure and in the copy
enlarged for presenting; Vega-Lite: `vega_inked`, as explorer/kit/controls.py `vega_lite_spec` converts
a chart).  A colour a figure sets itself (white numbers on a dark cell, a series' own colour) is kept.
tests/browser/test_contrast_browser.py measures the drawn text of every lesson in Chromium.
"""

from __future__ import annotations

import re

__all__ = ["INK", "VEGA_INK", "inked", "vega_inked"]

INK = "#1a1a1a"  # 17:1 on white
_COLOUR_BARS = {"heatmap", "contour", "histogram2d", "histogram2dcontour", "surface"}  # traces with a colour bar
_AXIS = re.compile(r"^(x|y)axis\d*$")  # a Cartesian axis (tickfont is no attribute of a polar/ternary layout)


def _paint(font: dict | None) -> dict:
    font = dict(font or {})
    font.setdefault("color", INK)
    return font


def _title(title) -> dict:
    title = {"text": title} if isinstance(title, str) else dict(title or {})
    title["font"] = _paint(title.get("font"))
    return title


def _colour_bar(bar: dict | None) -> dict:
    bar = dict(bar or {})
    bar["tickfont"] = _paint(bar.get("tickfont"))
    if "title" in bar:
        bar["title"] = _title(bar["title"])
    return bar


def inked(spec: dict) -> dict:
    """`spec` (a Plotly figure's dict, as `to_plotly_json` gives it) with its words in INK where it
    names no colour of its own: a new dict; `spec` is not changed."""
    layout = dict(spec.get("layout") or {})
    layout["font"] = _paint(layout.get("font"))
    for name, axis in list(layout.items()):
        if _AXIS.match(name) and isinstance(axis, dict):
            axis = dict(axis)
            axis["tickfont"] = _paint(axis.get("tickfont"))
            if "title" in axis:
                axis["title"] = _title(axis["title"])
            layout[name] = axis
        elif name.startswith("coloraxis") and isinstance(axis, dict):
            layout[name] = {**axis, "colorbar": _colour_bar(axis.get("colorbar"))}
    if "title" in layout:
        layout["title"] = _title(layout["title"])
    layout["legend"] = {**(layout.get("legend") or {}), "font": _paint((layout.get("legend") or {}).get("font"))}
    if layout.get("annotations"):
        layout["annotations"] = [{**note, "font": _paint(note.get("font"))} for note in layout["annotations"]]
    traces = [{**trace, "colorbar": _colour_bar(trace.get("colorbar"))}
              if "colorbar" in trace or trace.get("type") in _COLOUR_BARS else trace
              for trace in spec.get("data") or []]
    return {**spec, "layout": layout, "data": traces}


# Vega-Lite's configuration for the same words: axes' labels and titles, legends, titles.
VEGA_INK = {
    "axis": {"labelColor": INK, "titleColor": INK},
    "legend": {"labelColor": INK, "titleColor": INK},
    "title": {"color": INK, "subtitleColor": INK},
    "text": {"color": INK},
}


def vega_inked(spec: dict) -> dict:
    """`spec` (a Vega-Lite dict) with VEGA_INK under its own configuration (a colour it sets wins):
    a new dict; `spec` is not changed."""
    config = dict(spec.get("config") or {})
    for part, colours in VEGA_INK.items():
        config[part] = {**colours, **(config.get(part) or {})}
    return {**spec, "config": config}
