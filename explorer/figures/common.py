"""What every figure of the app shares: the fonts, colours and scales, the Plotly pieces (labelled
heatmap, bar chart, axes of tokens, panel grids) and the Altair pieces (legend style, colours by
name), and CSV text for the download buttons.

Made to be read from the back of a lecture hall: large fonts, token labels on both axes, a colour
bar with a title, and colour-blind-safe scales (Viridis for magnitudes, purple–orange for signed
values, Okabe–Ito for lines).  Axes are numeric with the tokens as tick text, so repeated tokens
("the … the") keep their own rows and columns instead of being merged into one category.

Plotly figures are built from plain specs without per-rerun validation (`figure_from_spec`; the unit
tests validate every builder once).  Log10 values (gradient norms) have their own pieces in
explorer/figures/logscale.py.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from itertools import pairwise

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io
from plotly.basedatatypes import BaseFigure
from plotly.colors import get_colorscale

from ..caching import loaded
from .ink import inked
from .margins import TOOLBAR_PX, fit_margins, phone_width

__all__ = [
    "CHART_HEIGHT",
    "DIVERGING",
    "FONT_SIZE",
    "OKABE_ITO",
    "PLAIN_NUMBERS",
    "PRESENT_AXES",
    "PRESENT_HEIGHT",
    "PRESENT_VEGA",
    "SEQUENTIAL",
    "FrozenFigure",
    "bar_chart",
    "bright_ticks",
    "colour_list",
    "figure_from_spec",
    "frame_csv",
    "frozen",
    "grid_domains",
    "heatmap",
    "hover_grid",
    "indexed_labels",
    "label_step",
    "matrix_csv",
    "panel_categories",
    "panel_title",
    "plotly_text",
    "subscript",
    "token_axis",
]

FONT_SIZE = 16
SEQUENTIAL = "Viridis"
DIVERGING = "PuOr"
# Okabe & Ito (2008), a palette that stays distinct for the common forms of colour blindness.
OKABE_ITO = {
    "orange": "#E69F00", "sky blue": "#56B4E9", "bluish green": "#009E73", "yellow": "#F0E442",
    "blue": "#0072B2", "vermillion": "#D55E00", "reddish purple": "#CC79A7", "black": "#000000",
}
CHART_HEIGHT = 420


# --- Plotly ---------------------------------------------------------------------------------------


@loaded(16)
def _scale_stops(name: str) -> tuple[tuple[float, str], ...]:
    return tuple((float(v), str(c)) for v, c in get_colorscale(name))


def colour_list(scale) -> list:
    """A Plotly colour scale as an explicit [[position, colour], …] list.

    Specs skip Python-side validation, which is what normally expands a scale name; plotly.js itself
    knows only some names (not PuOr) and silently falls back to another scale for the rest.
    """
    return [list(stop) for stop in (_scale_stops(scale) if isinstance(scale, str) else scale)]


def plotly_text(label) -> str:
    """Plotly reads labels as HTML: escape them so tokens like <s> and <pad> show as written."""
    return str(label).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def figure_from_spec(spec: dict) -> go.Figure:
    """Wrap a plain Plotly spec in a Figure without re-validating it.

    Plotly validates every property on construction, which costs tens of milliseconds per figure
    on every rerun.  The specs built here are validated once, by the unit tests (which construct
    each of them with validation on), so the app can skip it.
    """
    return go.Figure(spec, _validate=False)


def grid_domains(n: int, gap: float) -> list[tuple[float, float]]:
    """n equal intervals of [0, 1] separated by `gap`, left to right."""
    size = (1.0 - gap * (n - 1)) / n
    return [(i * (size + gap), i * (size + gap) + size) for i in range(n)]


def panel_title(text: str, x_domain, y_top: float, size: int = FONT_SIZE - 2) -> dict:
    """An annotation centred over one panel of a grid (x_domain in paper coordinates), its bottom at y_top."""
    return {"text": text, "x": (x_domain[0] + x_domain[1]) / 2, "y": y_top, "xref": "paper", "yref": "paper",
            "xanchor": "center", "yanchor": "bottom", "showarrow": False, "font": {"size": size}}


LABEL_FONT_PX = 18  # the largest tick font a token axis gets (presentation mode's minimum)
GRID_WIDTH_PX = 440  # the narrowest plot area a grid of panels gets on a desk (1400 px) or a projector
# (1280 px, presenting): the page's figure column, measured ~460 px wide at both
SLANT_AFTER = 3  # tokens longer than this are slanted 45° on a horizontal axis ("<s>", "t12" stay upright)


def label_step(labels: Sequence[str], panel_px: float, *, vertical: bool = False,
               font_px: float = LABEL_FONT_PX) -> int:
    """Label every k-th token, k the least that leaves no two tick labels overlapping in a panel
    `panel_px` wide (or high, `vertical`), at the largest font a figure gives them (or `font_px`).  Two upright
    labels k columns apart need half of each one's width (0.62 em a character) plus a gap between
    their centres; labels slanted 45° need only their line height ÷ sin 45°, whatever their length;
    rows need a line height."""
    n = len(labels)
    if n <= 1:
        return 1
    cell = panel_px / n
    if vertical or max(map(len, labels)) > SLANT_AFTER:
        room = 1.35 * font_px if vertical else 1.7 * font_px
        return min(n, max(1, int(-(-room // cell))))
    widths = [0.62 * font_px * len(str(label)) for label in labels]
    for k in range(1, n):
        shown = widths[::k]
        if all((a + b) / 2 + 0.5 * font_px <= k * cell for a, b in pairwise(shown)):
            return k
    return n


def bright_ticks(mass: np.ndarray, every: int) -> list[int]:
    """The columns to label when labels must thin to one per `every` columns: the ones with the most
    `mass` (a panel's weight per key), greedily, none nearer than `every` columns to another; every
    column when `every` is 1.  Columns of mass -inf (the blanks between panels) get no label.
    Thinning to every k-th from the first labels columns by their place alone, and a head's one
    bright column was left unnamed (the attention lesson's "animal")."""
    mass = np.asarray(mass, dtype=float)
    labelled = [int(column) for column in np.argsort(-mass, kind="stable") if np.isfinite(mass[column])]
    if every <= 1:
        return sorted(labelled)
    chosen: list[int] = []
    for column in labelled:
        if all(abs(column - other) >= every for other in chosen):
            chosen.append(column)
    return sorted(chosen)


def indexed_labels(tokens: Sequence[str]) -> list[str]:
    """"i token" for each token, escaped: distinct labels for a category axis, repeated tokens included."""
    return [f"{i} {plotly_text(token)}" for i, token in enumerate(tokens)]


def panel_categories(kind: str, n_panels: int, names: Sequence[str], gap: int, *, sep: str,
                     around: bool = False) -> list[str]:
    """Panels side by side on one category axis (hover names a cell from the axes, with no text per cell):
    "{kind} p{sep}{name}" per name of panel p (from 1), and `gap` distinct blanks (runs of spaces)
    between two panels, and before the first and after the last if `around`."""
    blanks = (" " * k for k in range(1, (n_panels + 1) * gap + 1))
    out: list[str] = []
    for panel in range(n_panels):
        out += [next(blanks) for _ in range(gap if panel or around else 0)]
        out += [f"{kind} {panel + 1}{sep}{name}" for name in names]
    return out + [next(blanks) for _ in range(gap if around else 0)]


def token_axis(labels, *, domain, anchor, size, reverse=False, show=True, every: int = 1, keep: int = 0) -> dict:
    """A numeric axis 0 … n−1 with the tokens as tick text (show=False: blank ticks, for panels that share
    the row labels of the first), every `every`-th token labelled counting from `keep` (see `label_step`).
    Labels are never turned by Plotly (it turns crowded ones 90°, into a column of letters): short ones stay
    upright, longer ones on a horizontal axis are slanted 45°; the margin grows to hold them (Plotly's
    automargin here; the figure is sent with that room worked out instead, explorer/figures/margins.py)."""
    shown = list(range(keep % max(1, every), len(labels), max(1, every)))
    axis = {
        "domain": list(domain), "anchor": anchor, "tickmode": "array", "tickvals": shown,
        "ticktext": [plotly_text(labels[i]) for i in shown] if show else [""] * len(shown),
        "tickfont": {"size": size}, "showgrid": False, "zeroline": False, "tickangle": 0, "automargin": True,
    }
    if reverse:
        axis["autorange"] = "reversed"
    elif show and max(map(len, labels), default=0) > SLANT_AFTER:
        axis["tickangle"] = -45
    return axis


PRESENT_HEIGHT = "present_height"
"""A figure's `layout.meta` key: its height when presenting, if it must differ (a grid that has to fit
on one projected screen; explorer.figures.presentation applies it)."""

PRESENT_VEGA = "present"
"""A Vega-Lite chart's `usermeta` key: {"spec": {top-level properties}, "legend": {legend config}} it takes
when presenting (a legend laid out for a phone's width under the plot goes beside it on a projector)."""

PRESENT_AXES = "present_axes"
"""A figure's `layout.meta` key: {axis name: entries} its axes take when presenting (fewer tick labels,
where the presenting height leaves a labelled row too little room for the 18 px font)."""

PLAIN_NUMBERS = {"exponentformat": "power", "minexponent": 3}
"""Tick format of an axis of losses, probabilities and other plain numbers: Plotly's default writes
SI prefixes (0.00006 reads "60µ", a loss of 2000 "2k"); this writes 6×10⁻⁵ instead."""


def hover_grid(query_tokens, key_tokens) -> np.ndarray:
    """Per cell "query → key", escaped, for a heatmap's hover text."""
    return np.array([[f"{plotly_text(q)} → {plotly_text(k)}" for k in key_tokens] for q in query_tokens])


def heatmap(
    z: np.ndarray,
    *,
    x_labels: Sequence[str],
    y_labels: Sequence[str],
    title: str = "",
    x_title: str = "key",
    y_title: str = "query",
    value_name: str = "weight",
    colorscale: str = SEQUENTIAL,
    zmin: float | None = None,
    zmax: float | None = None,
    annotate: bool | None = None,
    number_format: str = ".2f",
    height: int | None = None,
    present_height: int | None = None,
    present_width: int | None = None,
    plot_width: int | None = None,
) -> go.Figure:
    """A labelled matrix.  NaN cells are drawn blank (used for masked attention entries).

    annotate: print each value in its cell; by default only for matrices up to 12×12.
    present_height: a lower height for one projected screen, its rows labelled as often as the
    presenting font leaves room for (the margins above and below taken as PRESENT_FRAME_PX);
    present_width: the width of its plot area when presenting (where the page puts it), its key
    columns then labelled as often as the presenting font leaves room for;
    plot_width: the same at the desk (a narrow plot area): its key columns and rows then labelled
    as often as the desk's font leaves room for."""
    z = np.asarray(z, dtype=np.float64)
    n_rows, n_cols = z.shape
    if len(x_labels) != n_cols or len(y_labels) != n_rows:
        raise ValueError(f"labels ({len(y_labels)} × {len(x_labels)}) do not fit the matrix {z.shape}")
    if annotate is None:
        annotate = n_rows <= 12 and n_cols <= 12
    trace = {
        "type": "heatmap", "z": z, "colorscale": colour_list(colorscale), "xgap": 1, "ygap": 1,
        "colorbar": {"title": {"text": value_name, "side": "right"}, "thickness": 18,
                     "tickfont": {"size": FONT_SIZE - 2}, **PLAIN_NUMBERS},
        "customdata": hover_grid(y_labels, x_labels),
        "hovertemplate": (f"{y_title} → {x_title}: %{{customdata}}<br>"
                          f"{value_name}: %{{z:{number_format}}}<extra></extra>"),
    }
    for name, value in (("zmin", zmin), ("zmax", zmax)):
        if value is not None:
            trace[name] = value
    if colorscale == DIVERGING and zmin is None:
        trace["zmid"] = 0
    if annotate:
        trace.update(texttemplate=f"%{{z:{number_format}}}", textfont={"size": FONT_SIZE - 2})
    height = height or max(320, min(720, 120 + 46 * n_rows))
    x_every = y_every = 1
    if plot_width is not None:
        x_every = label_step(x_labels, plot_width, font_px=FONT_SIZE)
        y_every = label_step(y_labels, height - PRESENT_FRAME_PX, vertical=True, font_px=FONT_SIZE)
    x_axis = token_axis(x_labels, domain=(0.0, 1.0), anchor="y", size=FONT_SIZE, every=x_every)
    x_axis.update(side="top", title={"text": x_title})
    y_axis = token_axis(y_labels, domain=(0.0, 1.0), anchor="x", size=FONT_SIZE, reverse=True, every=y_every)
    y_axis["title"] = {"text": y_title}
    layout = {
        "font": {"size": FONT_SIZE},
        # The key axis is on top, so the title needs room above the tick labels and axis title.
        "margin": {"l": 10, "r": 10, "t": 110 if title else 70, "b": 10},
        "height": height,
        "plot_bgcolor": "rgba(0,0,0,0)", "xaxis": x_axis, "yaxis": y_axis,
    }
    if title:
        layout["title"] = {"text": title, "font": {"size": FONT_SIZE + 2}, "y": 0.98}
    present: dict = {}
    if present_height is not None and present_height < layout["height"]:
        every = label_step(y_labels, present_height - PRESENT_FRAME_PX, vertical=True)
        thinned = token_axis(y_labels, domain=(0.0, 1.0), anchor="x", size=FONT_SIZE, reverse=True, every=every)
        present = {PRESENT_HEIGHT: present_height,
                   PRESENT_AXES: {"yaxis": {k: thinned[k] for k in ("tickvals", "ticktext")}}}
    if present_width is not None:
        thinned = token_axis(x_labels, domain=(0.0, 1.0), anchor="y", size=FONT_SIZE,
                             every=label_step(x_labels, present_width))
        present.setdefault(PRESENT_AXES, {})["xaxis"] = {k: thinned[k] for k in ("tickvals", "ticktext")}
    if present:
        layout["meta"] = present
    return figure_from_spec({"data": [trace], "layout": layout})


PRESENT_FRAME_PX = 150  # a presented heatmap's margins above and below its rows (keys on top, at 18 px)


def bar_chart(
    labels: Sequence[str],
    values: Sequence[float],
    *,
    title: str,
    value_title: str,
    label_title: str = "key",
    number_format: str = ".2f",
    domain: tuple[float, float] | None = None,
    color: str = "#3b528b",
) -> go.Figure:
    """Horizontal bars, first label on top, each value printed just outside its bar.

    A Plotly spec rather than an Altair chart: a layered Altair chart is built and validated again
    on every rerun, a Plotly spec of a few bars costs next to nothing.
    """
    values = np.asarray(values, dtype=np.float64)
    if domain is None:
        # Leave room beyond the longest bar on each side for its printed value.
        lo, hi = float(min(0.0, values.min(initial=0.0))), float(max(0.0, values.max(initial=0.0)))
        pad = 0.35 * (hi - lo or 1.0)
        domain = (lo - pad if lo < 0 else 0.0, hi + pad if hi > 0 else 0.0)
    trace = {
        "type": "bar", "orientation": "h", "x": values, "y": list(range(len(values))), "marker": {"color": color},
        "text": [format(v, number_format) for v in values], "textposition": "outside", "cliponaxis": False,
        "textfont": {"size": FONT_SIZE - 1}, "customdata": [plotly_text(label) for label in labels],
        "hovertemplate": f"{label_title} %{{customdata}}<br>{value_title} %{{x:{number_format}}}<extra></extra>",
    }
    layout = {  # the title just above the bars, under the toolbar's band (not behind its buttons)
        "title": {"text": title, "font": {"size": FONT_SIZE + 2}, "yref": "paper", "y": 1.0, "yanchor": "bottom",
                  "pad": {"b": 12}}, "font": {"size": FONT_SIZE},
        "xaxis": {"title": {"text": value_title}, "range": list(domain), "zeroline": True,
                  "zerolinecolor": "#888", "tickfont": {"size": FONT_SIZE - 2}, **PLAIN_NUMBERS},
        "yaxis": token_axis(labels, domain=(0.0, 1.0), anchor="x", size=FONT_SIZE, reverse=True),
        "height": 110 + TOOLBAR_PX + 38 * len(values), "margin": {"l": 10, "r": 10, "t": 50 + TOOLBAR_PX, "b": 10},
        "plot_bgcolor": "rgba(0,0,0,0)", "bargap": 0.25,
    }
    layout["yaxis"]["title"] = {"text": label_title}
    return figure_from_spec({"data": [trace], "layout": layout})


def matrix_csv(z: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str], corner: str = "") -> str:
    """A labelled matrix as CSV text (first column the row labels)."""
    frame = pd.DataFrame(np.asarray(z), index=[str(r) for r in row_labels], columns=[str(c) for c in col_labels])
    frame.index.name = corner or None
    buffer = io.StringIO()
    frame.to_csv(buffer)
    return buffer.getvalue()


# --- Altair, CSV and text ---------------------------------------------------------------------------


_SUBSCRIPTS = str.maketrans("0123456789-st", "₀₁₂₃₄₅₆₇₈₉₋ₛₜ")


def subscript(text) -> str:
    """Unicode subscript for digits, '-', 's' and 't' (x₆₃, yₜ): no HTML needed in Markdown."""
    return str(text).translate(_SUBSCRIPTS)


def frame_csv(frame: pd.DataFrame) -> str:
    buffer = io.StringIO()
    frame.to_csv(buffer, index=False)
    return buffer.getvalue()


class FrozenFigure(BaseFigure):
    """A figure nobody changes once it is built, kept as its JSON text: figures shared by sessions
    (a live run's frames, one setting's views made once).  Streamlit's plotly_chart asks for its
    dict (`to_dict`) at every draw; this one parses its text instead of deep-copying a Figure's tree
    and converting its arrays again.  Kept as text, a cache of them holds no objects for the garbage
    collector to walk (a Figure is ~400 of them).  Only to_dict / to_plotly_json are meant to be
    called (BaseFigure.__init__ is not run)."""

    def __init__(self, figure: go.Figure):  # no BaseFigure state: the text is all there is
        text = plotly.io.to_json(figure, validate=False)
        spec = json.loads(text)
        fitted = fit_margins(inked(spec))  # drawn in one pass in the browser (explorer/figures/margins.py)
        self.__dict__["_json"] = json.dumps(fitted, separators=(",", ":"))
        self.__dict__["phone_width"] = phone_width(fitted)  # where its panel titles fit side by side

    def to_dict(self) -> dict:
        return json.loads(self.__dict__["_json"])

    def to_plotly_json(self) -> dict:
        return self.to_dict()

    def __repr__(self) -> str:
        return f"FrozenFigure({len(self.__dict__['_json'])} characters)"


def frozen(figure: go.Figure) -> FrozenFigure:
    """`figure` kept as its JSON text (see FrozenFigure), its margins worked out (`fit_margins`)."""
    return FrozenFigure(figure)
