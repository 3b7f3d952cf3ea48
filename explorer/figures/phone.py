"""Figures for a phone: a finished Plotly figure laid out again for a screen about 360 px wide.

Works on the plain dict the app sends (like explorer/figures/presentation.py for the projector), so one
rule covers every figure builder.  A figure drawn for a desk puts its panels side by side; at a phone's
width each would be a strip a few tokens wide, so its panels are stacked one under the other, in reading
order (row by row, left to right), each keeping its own height, its title and marks going with it.  Then,
for the width the chart will have:

- a token axis whose labels no longer fit upright between their ticks stands them on end, smaller;
- values printed in a heatmap's cells are drawn smaller, or left out when even that does not fit (the
  colour and the tap's hover still give them);
- margins are worked out again for the labels as they now stand (explorer/figures/margins.py).

A chart that fits as it is comes back unchanged but for its width (the page's).
"""

from __future__ import annotations

import copy
import itertools
import math

from .margins import (
    PLOTLY_MARGIN,
    TITLE_AXES,
    TOOLBAR_PX,
    _extent,
    _labels,
    _size,
    fit_margins,
    label_width,
    text_lines,
)
from .presentation import _titles_above

__all__ = ["PHONE_CHART_PX", "fit_phone"]

PHONE_CHART_PX = 358  # a 390 px phone's chart: the page's column less Streamlit's padding
_TITLE_LINE = 1.3  # plotly.js: each line of a text is 1.3 em below the one before
_LABEL_LINE = 1.5  # a line of tick labels, in em, generously
_MIN_FONT = 10  # px: the smallest tick label or cell value drawn on a phone
_PANEL_GAP = 12  # px between a panel's labels and the next panel's title
COLOUR_BAR_PX = 360  # the longest colour bar drawn on a phone (px)
_GENEROUS = 0.8  # label_width errs wide by design (margins); for whether labels fit between ticks, less so
TOOLBAR_RESERVE = 84  # px at a chart's top right that its toolbar's two buttons take


def _ref(name: str) -> str:
    """Layout key → trace reference: 'xaxis2' → 'x2', 'xaxis' → 'x'."""
    return name[0] + name[5:]


def _key(ref: str) -> str:
    """Trace reference → layout key: 'x2' → 'xaxis2'."""
    return ref[0] + "axis" + ref[1:]


def _panels(layout: dict) -> list[dict]:
    """Each x axis that is not drawn over another, with the y axis it stands on, as a panel: its box in
    paper coordinates (x0, x1, y0, y1)."""
    panels = []
    for name, axis in layout.items():
        if not (name.startswith("xaxis") and isinstance(axis, dict)) or axis.get("overlaying"):
            continue
        y_name = _key(str(axis.get("anchor") or "y"))
        if not isinstance(layout.get(y_name), dict):
            continue
        (x0, x1), (y0, y1) = axis.get("domain", [0.0, 1.0]), layout[y_name].get("domain", [0.0, 1.0])
        panels.append({"x": name, "y": y_name, "box": (float(x0), float(x1), float(y0), float(y1))})
    return panels


def _side_by_side(panels: list[dict]) -> bool:
    """Two panels share a row (their heights overlap) and stand apart sideways."""
    for i, a in enumerate(panels):
        for b in panels[i + 1:]:
            ax0, ax1, ay0, ay1 = a["box"]
            bx0, bx1, by0, by1 = b["box"]
            if min(ay1, by1) - max(ay0, by0) > 0.01 and (ax1 <= bx0 + 0.01 or bx1 <= ax0 + 0.01):
                return True
    return False


def _reading_order(panels: list[dict]) -> list[dict]:
    """Rows from the top (panels whose heights overlap share a row), each from the left."""
    rows: list[list[dict]] = []
    for panel in sorted(panels, key=lambda p: -p["box"][3]):
        row = next((r for r in rows if min(r[0]["box"][3], panel["box"][3]) - max(r[0]["box"][2], panel["box"][2])
                    > 0.01), None)
        if row is None:
            rows.append([panel])
        else:
            row.append(panel)
    return [panel for row in rows for panel in sorted(row, key=lambda p: p["box"][0])]


def _margins(layout: dict) -> dict[str, float]:
    return {side: float((layout.get("margin") or {}).get(side, default)) for side, default in PLOTLY_MARGIN.items()}


def _home(panels: list[dict], x: float, y: float) -> dict:
    """The panel a paper-coordinate point belongs to: the one containing it, else the nearest."""
    def distance(panel):
        x0, x1, y0, y1 = panel["box"]
        return (max(x0 - x, 0.0, x - x1) ** 2) + (max(y0 - y, 0.0, y - y1) ** 2)
    return min(panels, key=distance)


def _titles_px(layout: dict, panel: dict, panels: list[dict], plot_px: float, base_size: float) -> float:
    """How far the panel's titles (paper annotations standing on its top edge, nearer to it than to any other
    panel) reach above it (px)."""
    y1 = panel["box"][3]
    reach = 0.0
    for note in layout.get("annotations") or []:
        if note.get("xref", "paper") != "paper" or note.get("yref", "paper") != "paper":
            continue
        x, y = float(note.get("x", 0.5)), float(note.get("y", 0.5))
        if y < y1 - 0.01 or _home(panels, x, y) is not panel:
            continue
        lines = len(text_lines(note.get("text", "")))
        above = (y - y1) * plot_px + (lines * _TITLE_LINE * _size(note.get("font"), base_size)
                                      if note.get("yanchor") == "bottom" else 0.0)
        reach = max(reach, above)
    return reach


def _below(axis: dict, base_size: float) -> float:
    """How far a panel's horizontal axis reaches below it (px): its labels, known or numbers Plotly picks
    (a line of them), and its title."""
    if axis.get("side") == "top":
        return 0.0
    reach = _extent(axis, True, base_size)[0]
    if _labels(axis) is None:  # numbers: one line of tick labels
        reach += _LABEL_LINE * _size(axis.get("tickfont"), base_size) + 4
    return reach


def _stack(spec: dict, panels: list[dict]) -> None:
    """Lays the panels out one under the other (see the module), moving what stands on each with it."""
    layout = spec["layout"]
    base_size = _size(layout.get("font"), 12)
    margin = _margins(layout)
    height = float(layout.get("height") or 450)
    plot_px = max(1.0, height - margin["t"] - margin["b"])
    order = _reading_order(panels)
    # Each panel's own height in px, the room its title needs above it and its x labels below it.
    heights = [(p["box"][3] - p["box"][2]) * plot_px for p in order]
    above = [_titles_px(layout, p, order, plot_px, base_size) for p in order]
    below = [_below(layout[p["x"]], base_size) for p in order]
    total = sum(heights) + sum(above[1:]) + sum(below[:-1]) + _PANEL_GAP * (len(order) - 1)
    top_px = 0.0  # from the top of the new plot area
    for i, panel in enumerate(order):
        if i:
            top_px += below[i - 1] + _PANEL_GAP + above[i]
        y1 = min(1.0, max(0.0, round(1.0 - top_px / total, 6)))
        y0 = min(1.0, max(0.0, round(1.0 - (top_px + heights[i]) / total, 6)))
        panel["new"] = (0.0, 1.0, y0, y1)
        top_px += heights[i]
    _borrowed_row_labels(layout, order)
    for panel in order:
        layout[panel["x"]]["domain"] = [0.0, 1.0]
        layout[panel["y"]]["domain"] = [panel["new"][2], panel["new"][3]]
    for name, axis in layout.items():  # axes drawn over a panel's go with it
        if isinstance(axis, dict) and axis.get("overlaying"):
            base = next((p for p in order if _ref(p["x"]) == axis["overlaying"] or _ref(p["y"]) == axis["overlaying"]),
                        None)
            if base:
                axis["domain"] = [base["new"][0], base["new"][1]] if name.startswith("x") else \
                    [base["new"][2], base["new"][3]]

    def move(x: float, y: float, panel: dict | None = None) -> tuple[float, float]:
        panel = panel or _home(order, x, y)
        ox0, ox1, oy0, oy1 = panel["box"]
        nx0, nx1, ny0, ny1 = panel["new"]
        new_x = nx0 + (x - ox0) / max(ox1 - ox0, 1e-9) * (nx1 - nx0)
        if x > ox1 + 0.005:  # right of its panel (a colour bar, a note): right of the plot
            new_x = nx1 + min(x - ox1, 0.05)
        elif x < ox0 - 0.005:
            new_x = nx0 - min(ox0 - x, 0.05)
        # the same distance in px from the panel's top edge (or bottom edge, below it)
        new_y = ny1 - (oy1 - y) * plot_px / total if y >= oy0 else ny0 - (oy0 - y) * plot_px / total
        return new_x, new_y

    for note in layout.get("annotations") or []:
        if note.get("xref", "paper") == "paper" and note.get("yref", "paper") == "paper":
            note["x"], note["y"] = move(float(note.get("x", 0.5)), float(note.get("y", 0.5)))
    for shape in layout.get("shapes") or []:
        if shape.get("xref", "x") == "paper" and shape.get("yref", "y") == "paper":
            corners = [(float(shape["x0"]), float(shape["y0"])), (float(shape["x1"]), float(shape["y1"]))]
            panel = _home(order, (corners[0][0] + corners[1][0]) / 2, (corners[0][1] + corners[1][1]) / 2)
            (shape["x0"], shape["y0"]), (shape["x1"], shape["y1"]) = (move(x, y, panel) for x, y in corners)
    bars = _colour_bars(spec)
    for bar, refs in bars:
        mine = [p for p in order if (_ref(p["x"]), _ref(p["y"])) in refs] or order  # beside its traces' panels
        top, bottom = max(p["new"][3] for p in mine), min(p["new"][2] for p in mine)
        bar.update({"x": 1.02, "xanchor": "left", "y": top, "yanchor": "top", "lenmode": "fraction",
                    "len": max(top - bottom, 0.1)})
        if (top - bottom) * total > COLOUR_BAR_PX:  # beside five stacked panels: as long as one screen's chart
            bar.update({"lenmode": "pixels", "len": COLOUR_BAR_PX})
    layout["height"] = math.ceil(total + margin["t"] + margin["b"])


def _colour_bars(spec: dict) -> list[tuple[dict, set]]:
    """Each colour bar drawn, with the panels (x, y references) of the traces it belongs to."""
    layout, traces = spec["layout"], spec.get("data", [])

    def panel(trace):
        return str(trace.get("xaxis") or "x"), str(trace.get("yaxis") or "y")

    bars = []
    for name, axis in layout.items():
        if name.startswith("coloraxis") and isinstance(axis, dict) and axis.get("showscale") is not False:
            users = {panel(t) for t in traces if t.get("coloraxis") == name}
            if users:
                bars.append((axis.setdefault("colorbar", {}), users))
    for trace in traces:
        if trace.get("coloraxis") or trace.get("type") not in _SCALED or trace.get("showscale") is False:
            continue
        bars.append((trace.setdefault("colorbar", {}), {panel(trace)}))
    return bars


_SCALED = ("heatmap", "contour", "histogram2d")


def _plot_width(spec: dict, width: float) -> float:
    """The plot area's width (px) in a chart `width` px wide: less the margins and a colour bar's reach."""
    layout = spec["layout"]
    margin = _margins(layout)
    reach = 0.0
    for bar, _ in _colour_bars(spec):
        title = (bar.get("title") or {}).get("text") if isinstance(bar.get("title"), dict) else bar.get("title")
        reach = max(reach, float(bar.get("thickness", 30)) + float(bar.get("xpad", 10)) + 34 + (22 if title else 0))
    return max(60.0, width - margin["l"] - margin["r"] - reach)


def _title_on_left(layout: dict, width: float) -> None:
    """The chart's title from its left edge, in the width left of the toolbar: smaller (down to 14 px), then on
    more lines (centred, titles ran under the toolbar's buttons or past the chart's edge)."""
    title = layout.get("title")
    if isinstance(title, str):
        layout["title"] = title = {"text": title}
    if not isinstance(title, dict) or not title.get("text"):
        return
    size = _size(title.get("font"), _size(layout.get("font"), 12) * 1.4)
    room = width - TOOLBAR_RESERVE
    widest = max(label_width(line, size) for line in text_lines(title["text"])) * _GENEROUS
    if widest > room:
        size = max(14.0, math.floor(size * room / widest))
        title.setdefault("font", {})["size"] = size
    lines: list[str] = []
    for line in text_lines(title["text"]):
        current = ""
        for word in line.split(" "):
            trial = f"{current} {word}".strip()
            if current and label_width(trial, size) * _GENEROUS > room:
                lines.append(current)
                current = word
            else:
                current = trial
        lines.append(current)
    band = 8 + len(lines) * _TITLE_LINE * size + 6
    height = float(layout.get("height") or 450)
    title.update({"text": "<br>".join(lines), "x": 0.0, "xref": "container", "xanchor": "left", "pad": {"l": 4},
                  "y": 1.0 - band / 2 / height, "yref": "container", "yanchor": "middle"})


def _room_for_title(layout: dict) -> None:
    """The top margin holds the title's lines (and, under them, what the margin held before)."""
    title = layout.get("title")
    if not isinstance(title, dict) or not title.get("text"):
        return
    size = _size(title.get("font"), _size(layout.get("font"), 12) * 1.4)
    need = 8 + len(text_lines(title["text"])) * _TITLE_LINE * size + 6
    margin = layout.setdefault("margin", {})
    margin["t"] = math.ceil(max(float(margin.get("t", PLOTLY_MARGIN["t"])), need))


def _room_above(layout: dict) -> None:
    """Room in the top margin for what stands on the top panel (its titles, a key in words), under the toolbar's
    band: stacked, a panel's centred title comes under the toolbar's buttons.  The chart grows by what it adds."""
    need = _titles_above(layout)
    if not need:
        return
    margin = layout.setdefault("margin", {})
    top = float(margin.get("t", PLOTLY_MARGIN["t"]))
    want = math.ceil(need + TOOLBAR_PX)
    if want > top:
        margin["t"] = want
        layout["height"] = math.ceil(float(layout.get("height") or 450) + want - top)


def _legend_below(spec: dict, width: float) -> None:
    """A legend beside the plot goes under it, its entries side by side (beside it, it took half a phone's
    chart); one above the plot too (its entries on more rows there reached into the toolbar's band)."""
    layout = spec["layout"]
    legend = layout.setdefault("legend", {})
    names = [str(t.get("name") or "") for t in spec.get("data", []) if t.get("showlegend") is not False
             and (t.get("showlegend") or len(spec.get("data", [])) > 1) and t.get("name")]
    if not names or layout.get("showlegend") is False:
        return
    above = legend.get("orientation") == "h" and float(legend.get("y", 1.0)) >= 1.0
    if not above and (legend.get("orientation") == "h" or float(legend.get("x", 1.02)) < 0.98):
        return  # under or inside the plot: where the figure put it
    if above and not any(name.startswith("xaxis") and isinstance(axis, dict) and axis.get("side") == "top"
                         for name, axis in layout.items()):  # the band it stood in, given back to the plot
        margin = layout.setdefault("margin", {})
        margin["t"] = min(float(margin.get("t", PLOTLY_MARGIN["t"])), TOOLBAR_PX + 10)
    size = _size(legend.get("font"), _size(layout.get("font"), 12))
    rows, used = 1, 0.0
    for name in names:
        entry = label_width(name, size) + 44
        if used and used + entry > width:
            rows, used = rows + 1, 0.0
        used += entry
    legend.update({"orientation": "h", "x": 0.0, "xanchor": "left", "xref": "container", "y": 0.0,
                   "yanchor": "bottom", "yref": "container"})
    margin = layout.setdefault("margin", {})
    margin["b"] = float(margin.get("b", PLOTLY_MARGIN["b"])) + rows * (size * 1.6 + 4) + 6
    layout["height"] = float(layout.get("height") or 450) + rows * (size * 1.6 + 4) + 6


def _borrowed_row_labels(layout: dict, order: list[dict]) -> None:
    """A stacked panel that showed no row labels (its row's first panel named them, beside it) names them
    itself when it has as many rows: stacked, nothing beside it says which row is which."""
    for i, panel in enumerate(order):
        axis = layout[panel["y"]]
        if _labels(axis) and any(str(t).strip(" .·") for t in axis.get("ticktext") or []):
            continue
        source = next((layout[p["y"]] for p in order[:i] if p["box"][2:] == panel["box"][2:]
                       and _labels(layout[p["y"]]) and layout[p["y"]].get("range") == axis.get("range")), None)
        if source:
            for key in ("tickmode", "tickvals", "ticktext", "tickfont"):
                if key in source:
                    axis[key] = copy.deepcopy(source[key])
            axis["showticklabels"] = True


def _stand_crowded_labels(spec: dict, width: float) -> None:
    """Token axes whose labels do not fit upright between their ticks at this width stand on end."""
    layout = spec["layout"]
    base_size = _size(layout.get("font"), 12)
    plot = _plot_width(spec, width)
    meta = layout.get("meta") if isinstance(layout.get("meta"), dict) else {}
    titles = set(meta.get(TITLE_AXES) or ())
    for name, axis in list(layout.items()):
        if name.startswith("yaxis") and isinstance(axis, dict) and (labels := _labels(axis)):
            _wrap_long_rows(axis, width, base_size)
        if not (name.startswith("xaxis") and isinstance(axis, dict)):
            continue
        if _labels(axis) is None and (categories := _categories(spec, name)):
            if max(label_width(t, _size(axis.get("tickfont"), base_size)) for c in categories for t in text_lines(c)) \
                    * _GENEROUS > (axis.get("domain", [0.0, 1.0])[1] - axis.get("domain", [0.0, 1.0])[0]) * plot \
                    / len(categories):
                axis["tickangle"] = -90
            continue
        if not (labels := _labels(axis)):
            continue
        if axis.get("tickangle") not in (None, 0):
            continue
        x0, x1 = axis.get("domain", [0.0, 1.0])
        room = (x1 - x0) * plot / max(len(axis.get("ticktext") or labels), 1)
        size = _size(axis.get("tickfont"), base_size)
        widest = max(label_width(t, size) for label in labels for t in text_lines(label))
        if widest * _GENEROUS <= room:
            continue
        if (name in titles or axis.get("side") == "top") and (word := _shared_word(labels)):  # "head 1", "2", "3"
            axis["ticktext"] = [t if i == 0 else str(t)[len(word):].strip() for i, t in enumerate(axis["ticktext"])]
            rest = [str(t) for t in axis["ticktext"][1:]]
            if max(label_width(t, size) for t in rest) * _GENEROUS + label_width(word, size) / 2 <= room:
                continue
        axis["tickangle"] = -90
        if room < size * 1.2:
            axis.setdefault("tickfont", {})["size"] = max(_MIN_FONT, math.floor(room / 1.2))
        drawn = _size(axis.get("tickfont"), base_size)
        if room < drawn * 1.3:  # every k-th label: a line's height apart, standing on end
            step = math.ceil(drawn * 1.3 / room)
            axis["ticktext"] = [t if i % step == 0 else "" for i, t in enumerate(axis["ticktext"])]


def _columns(axis: dict, traces: list[dict]) -> float:
    """How many cells the axis spans: its range, else the widest heatmap drawn on it."""
    span = axis.get("range")
    if isinstance(span, list) and len(span) == 2 and all(isinstance(v, (int, float)) for v in span):
        return abs(float(span[1]) - float(span[0]))
    widest = 0
    for trace in traces:
        z = trace.get("z")
        if isinstance(z, dict) and "shape" in z:  # sent as binary: "rows, columns"
            widest = max(widest, int(str(z["shape"]).split(",")[-1]))
        elif isinstance(z, list) and z and isinstance(z[0], list):
            widest = max(widest, len(z[0]))
    return float(widest)


def _fit_text(size: float, text: str, cell: float) -> float | None:
    """The font size at which `text` fits a cell `cell` px wide: `size` if it does, smaller down to _MIN_FONT,
    None if not even then."""
    need = label_width(text, size) + 2
    if need <= cell:
        return size
    fit = math.floor(size * (cell - 2) / max(need - 2, 1.0))
    return float(fit) if fit >= _MIN_FONT else None


def _categories(spec: dict, axis_name: str) -> list[str]:
    """The text categories a bar chart draws along a horizontal axis that names no ticks of its own."""
    ref = _ref(axis_name)
    for trace in spec.get("data", []):
        values = trace.get("x")
        if trace.get("type") == "bar" and str(trace.get("xaxis") or "x") == ref and isinstance(values, list) \
                and values and all(isinstance(v, str) for v in values):
            return values
    return []


ROW_LABEL_SHARE = 0.4  # a row label may take this share of a phone's chart; longer ones go on two lines


def _wrap_long_rows(axis: dict, width: float, base_size: float) -> None:
    """Row labels wider than ROW_LABEL_SHARE of the chart on two lines, broken at the space nearest their middle."""
    size = _size(axis.get("tickfont"), base_size)
    texts = axis.get("ticktext") or []
    if not texts or max(label_width(str(t), size) for t in texts) * _GENEROUS <= ROW_LABEL_SHARE * width:
        return
    wrapped = []
    for text in texts:
        text = str(text)
        spaces = [i for i, c in enumerate(text) if c == " "]
        if "<br>" in text or not spaces or label_width(text, size) * _GENEROUS <= ROW_LABEL_SHARE * width:
            wrapped.append(text)
            continue
        cut = min(spaces, key=lambda i: abs(i - len(text) / 2))
        wrapped.append(text[:cut] + "<br>" + text[cut + 1:])
    axis["ticktext"] = wrapped


def _shorten_crowded_titles(spec: dict, width: float) -> None:
    """Panel titles side by side (paper annotations at one height) that run into each other at this width and
    all begin with one word keep it on the first only: "head 1", "2", "3", "4"."""
    layout = spec["layout"]
    rows: dict[float, list[dict]] = {}
    for note in layout.get("annotations") or []:
        if note.get("xref", "paper") == "paper" and note.get("yref", "paper") == "paper" and not note.get("textangle"):
            rows.setdefault(round(float(note.get("y", 0.0)), 3), []).append(note)
    plot, size = _plot_width(spec, width), _size(layout.get("font"), 12)
    for row in rows.values():
        if len(row) < 2 or not (word := _shared_word([str(n.get("text", "")) for n in row])):
            continue
        row.sort(key=lambda n: float(n.get("x", 0.0)))
        pitch = min(float(b.get("x", 0)) - float(a.get("x", 0)) for a, b in itertools.pairwise(row)) * plot
        if max(label_width(str(n.get("text")), _size(n.get("font"), size)) for n in row) + 4 <= pitch:
            continue
        for note in row[1:]:
            note["text"] = str(note["text"])[len(word):].strip()


def _shared_word(labels: list[str]) -> str:
    """The first word every label begins with ("head" of "head 1", "head 2"), or ""."""
    words = {str(t).split(" ", 1)[0] for t in labels}
    return next(iter(words)) if len(words) == 1 and all(" " in str(t) for t in labels) else ""


def _shrink_cell_values(spec: dict, width: float) -> None:
    """Values printed in heatmap cells (a trace's text, or annotations at the cells' centres): smaller where
    they no longer fit at this width, left out where even _MIN_FONT does not."""
    layout, traces = spec["layout"], spec.get("data", [])
    plot = _plot_width(spec, width)
    base_size = _size(layout.get("font"), 12)
    cells: dict[str, float] = {}  # x axis name → a cell's width in px
    for name in {_key(str(t.get("xaxis") or "x")) for t in traces if t.get("type") == "heatmap"}:
        axis = layout.get(name) if isinstance(layout.get(name), dict) else {}
        on_it = [t for t in traces if t.get("type") == "heatmap" and _key(str(t.get("xaxis") or "x")) == name]
        if columns := _columns(axis, on_it):
            x0, x1 = axis.get("domain", [0.0, 1.0])
            cells[name] = (x1 - x0) * plot / columns
    for trace in traces:
        cell = cells.get(_key(str(trace.get("xaxis") or "x")))
        if trace.get("type") != "heatmap" or cell is None or not (trace.get("texttemplate") or trace.get("text")):
            continue
        fit = _fit_text(_size(trace.get("textfont"), base_size), _cell_text(trace), cell)
        if fit is None:
            trace["texttemplate"] = ""
            trace.pop("text", None)
        else:
            trace.setdefault("textfont", {})["size"] = fit
    kept = []
    for note in layout.get("annotations") or []:
        cell = cells.get(_key(str(note.get("xref", "x")))) if note.get("xref", "x") != "paper" else None
        if cell is None or note.get("showarrow", True) is not False:
            kept.append(note)
            continue
        fit = _fit_text(_size(note.get("font"), base_size), str(note.get("text", "")), cell)
        if fit is not None:
            note.setdefault("font", {})["size"] = fit
            kept.append(note)
    if "annotations" in layout:
        layout["annotations"] = kept


def _cell_text(trace: dict) -> str:
    """A typical cell's printed text (its widest), for the room it needs."""
    text = trace.get("text")
    if isinstance(text, list) and text:
        flat = [str(t) for row in text for t in (row if isinstance(row, list) else [row])]
        return max(flat, key=len) if flat else "0.00"
    return "0.00"


def fit_phone(spec: dict, width: float = PHONE_CHART_PX) -> dict:
    """A copy of a Plotly figure dict laid out for a chart `width` px wide (see the module)."""
    spec = copy.deepcopy(spec)
    layout = spec.setdefault("layout", {})
    layout.pop("width", None)
    panels = _panels(layout)
    if len(panels) > 1 and _side_by_side(panels):
        _stack(spec, panels)
    _stand_crowded_labels(spec, width)
    _shorten_crowded_titles(spec, width)
    _title_on_left(layout, width)
    spec = fit_margins(spec)
    _legend_below(spec, width)
    _room_for_title(spec["layout"])
    _room_above(spec["layout"])
    _shrink_cell_values(spec, width)
    return spec

