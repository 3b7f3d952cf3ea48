"""The length-and-memory lesson's figures: handed the views' arrays, they return Altair charts, Plotly
figures and frames (each frame is also its CSV).  No model, no Streamlit."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import altair as alt
import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from explorer.figures.common import (
    CHART_HEIGHT,
    FONT_SIZE,
    OKABE_ITO,
    PRESENT_FRAME_PX,
    PRESENT_HEIGHT,
    PRESENT_VEGA,
    SEQUENTIAL,
    colour_list,
    heatmap,
)
from explorer.figures.margins import TOOLBAR_PX, column_gap
from explorer.figures.vega import colour_encoding, configure, phone_columns
from explorer.lessons.length.charts import LEGEND_LINES, byte_y, shared_lines

__all__ = ["GqaFigures", "LengthFigures", "MemoryFigures", "TiledFigures", "WindowFigures", "gqa_figures",
           "gqa_grid", "gqa_layout", "gqa_sharing", "human_bytes", "length_figures", "memory_figures",
           "tiled_figures", "window_figures"]

PALETTE = [OKABE_ITO[c] for c in ("blue", "vermillion", "bluish green", "orange", "reddish purple", "sky blue",
                                  "black", "yellow")]

def human_bytes(n: float) -> str:
    """Bytes in decimal units: 1.07 GB, 65.5 kB, 512 B."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} B"


def _colours(labels: Sequence[str]) -> dict[str, str]:
    return {label: PALETTE[i % len(PALETTE)] for i, label in enumerate(labels)}


# --- 1 · accuracy against length ------------------------------------------------------------------


@dataclass(frozen=True)
class LengthFigures:
    frame: pd.DataFrame  # encoding, letters, accuracy (refused lengths left out)
    chart: alt.LayerChart
    coinciding: str  # which lines lie on one another (`coinciding`), said under the chart
    summary: pd.DataFrame  # per encoding: the card's accuracy, here inside the band, just past it, the last
    seen: go.Figure | None  # None: the model could not be loaded
    unseen: go.Figure | None  # None: the model refused this length
    seen_csv: pd.DataFrame | None
    unseen_csv: pd.DataFrame | None


def accuracy_frame(lengths: np.ndarray, accuracy: Mapping[str, np.ndarray], labels: Mapping[str, str]) -> pd.DataFrame:
    parts = [pd.DataFrame({"encoding": labels.get(e, e), "letters": lengths, "accuracy": values})
             for e, values in accuracy.items()]
    frame = pd.concat(parts, ignore_index=True)
    return frame[frame["accuracy"].notna()].reset_index(drop=True)


# Each encoding's line, told apart by colour and by dash (Okabe-Ito; no two alike in both): lines that lie on
# one another (at 100 % inside the band, at 0 % past it) show through each other's gaps. The sinusoidal line,
# the one the first step asks about, is drawn first, solid and thickest: the others' gaps show it.
LINE_STYLES = {  # label: (colour, dash, width)
    "sinusoidal": (OKABE_ITO["vermillion"], [1, 0], 5),
    "learned table": (OKABE_ITO["blue"], [10, 5], 3),
    "RoPE": (OKABE_ITO["bluish green"], [2, 4], 3.5),
    "T5 buckets": (OKABE_ITO["black"], [1, 0], 2.5),
    "ALiBi": (OKABE_ITO["reddish purple"], [10, 5], 3),
    "raw index": (OKABE_ITO["sky blue"], [2, 4], 3.5),
    "no encoding": (OKABE_ITO["orange"], [12, 4, 3, 4], 3),
}
ON_TOP = "sinusoidal"
_SPARE = ([10, 5], [2, 4], [1, 0])  # a label without a style of its own (none shipped): a palette colour, a dash


def line_styles(names: Sequence[str]) -> dict[str, tuple[str, list[int], float]]:
    return {name: LINE_STYLES.get(name, (PALETTE[i % len(PALETTE)], _SPARE[i % len(_SPARE)], 3))
            for i, name in enumerate(names)}


def coinciding(frame: pd.DataFrame, trained: tuple[int, int]) -> str:
    """Which lines lie on one another, said from the frame: the encodings at 100 % at every trained length
    tested, and those at 0 % at every length tested past the band ("" where fewer than two share either)."""
    low, high = trained
    said = []
    for value, where, text in ((1.0, (frame["letters"] >= low) & (frame["letters"] <= high),
                                f"at 100 % at every trained length tested ({low}–{high} letters)"),
                               (0.0, frame["letters"] > high, f"at 0 % at every length tested past {high}")):
        part = frame[where]
        names = [n for n in dict.fromkeys(part["encoding"])
                 if (part.loc[part["encoding"] == n, "accuracy"] == value).all()]
        if len(names) > 1:
            said.append(f"{', '.join(names[:-1])} and {names[-1]} {text}")
    return ("Lines on top of one another: " + "; ".join(said) + ".") if said else ""


def accuracy_chart(frame: pd.DataFrame, trained: tuple[int, int]) -> alt.LayerChart:
    """Share of inputs reversed right against their length, one line per encoding (colour and dash,
    `LINE_STYLES`), the trained range shaded; the accuracy one letter past the band printed beside each
    point above 0 there (the first step's answer quotes them)."""
    names = list(dict.fromkeys(frame["encoding"]))
    styles = line_styles(names)
    colour = colour_encoding("encoding", names, {n: styles[n][0] for n in names}, title="positional encoding")
    dash = alt.StrokeDash("encoding:N", title="positional encoding", sort=names,
                          scale=alt.Scale(domain=names, range=[styles[n][1] for n in names]))
    x = alt.X("letters:Q", title="input length (letters)", scale=alt.Scale(domainMin=1), axis=alt.Axis(tickMinStep=1))
    y = alt.Y("accuracy:Q", title="whole answers right", axis=alt.Axis(format="%"),
              scale=alt.Scale(domain=[0, 1], nice=False))
    base = alt.Chart(frame)
    # One row after the aggregate: one band and one label, drawn from the chart's one data set.
    shade = base.transform_aggregate(rows="count()")
    band = shade.mark_rect(color="#999999", opacity=0.18).encode(x=alt.datum(trained[0] - 0.5),
                                                                  x2=alt.datum(trained[1] + 0.5))
    note = shade.mark_text(align="left", dx=4, dy=-8, fontSize=FONT_SIZE - 2, color="#444444").encode(
        x=alt.datum(trained[0] - 0.5), y=alt.datum(0.78),  # below T5's 93 % at 8–10 letters
        text=alt.value(f"trained on {trained[0]}–{trained[1]} letters"))
    tooltip = ["encoding:N", "letters:Q", alt.Tooltip("accuracy:Q", format=".0%")]
    encoded = {"x": x, "y": y, "color": colour, "strokeDash": dash, "tooltip": tooltip}
    # one layer a line, each its own width (a strokeWidth channel with legend=None dropped the shared legend),
    # the sinusoidal one first, under the dashed and dotted ones: it shows through their gaps, and they on it
    order = [n for n in names if n == ON_TOP] + [n for n in names if n != ON_TOP]
    lines = [base.transform_filter(alt.datum.encoding == name).mark_line(point=True, strokeWidth=styles[name][2])
             .encode(**encoded) for name in order]
    past = base.transform_filter((alt.datum.letters == trained[1] + 1) & (alt.datum.accuracy > 0))
    printed = past.mark_text(align="left", dx=8, fontSize=FONT_SIZE, fontWeight="bold").encode(
        x=x, y=y, color=colour,  # the lines' colour encoding: a legend=None here would drop the shared legend
        text=alt.Text("accuracy:Q", format=".0%"))
    # Presenting (beside the section's text): the legend beside the plot in one column, the plot all of the height
    beside = {"spec": {"height": CHART_HEIGHT - 40, "autosize": {"type": "fit", "contains": "padding"}},
              "legend": {"orient": "right", "columns": 1}}
    return configure(alt.layer(band, *lines, printed, note).properties(height=CHART_HEIGHT,
                                                                         usermeta={PRESENT_VEGA: beside}),
                     legend_orient="bottom", legend_columns=phone_columns(3, 2))  # seven encodings in three columns


# Presenting, under a step's answer and the section's reading text: the two grids end on a 720 px screen;
# side by side, each one's cells are about this wide on a 1280 px projector.
PRESENT_GRID_PX, PRESENT_GRID_WIDTH_PX = 390, 300
DESK_GRID_WIDTH_PX = 210  # at the desk (1400 px), each grid's plot area beside the other, between its labels and scale


def grid_height(longest: int) -> int:
    """Both grids' height at the desk (side by side, one height): a row a line of the desk's font
    for up to 15 letters; past that its rows are labelled every other one or less (`heatmap`)."""
    return max(460, min(520, PRESENT_FRAME_PX + 22 * (longest + 1)))


def attention_figure(weights: np.ndarray, letters: Sequence[str], title: str,
                     height: int | None = None) -> tuple[go.Figure, pd.DataFrame]:
    """Cross-attention (rows: the letter being written, reversed input then </s>; columns: the input),
    `height` by default its own `grid_height`."""
    n = len(letters)
    columns = [f"{i}:{c}" for i, c in enumerate(letters)]
    rows = [f"{i}:{c}" for i, c in enumerate(reversed(letters))] + [f"{n}:</s>"]
    figure = heatmap(weights, x_labels=columns, y_labels=rows, title=title, x_title="input letter read",
                     y_title="output being written", zmin=0, zmax=1, annotate=False, height=height or grid_height(n),
                     present_height=PRESENT_GRID_PX, present_width=PRESENT_GRID_WIDTH_PX,
                     plot_width=DESK_GRID_WIDTH_PX)
    frame = pd.DataFrame(weights, index=rows, columns=columns).rename_axis("writing").reset_index()
    return figure, frame


def length_figures(view, labels: Mapping[str, str]) -> LengthFigures:
    frame = accuracy_frame(view.lengths, view.accuracy, labels)
    seen = seen_csv = unseen = unseen_csv = None
    height = grid_height(max(view.seen.length, view.unseen.length))
    if not view.seen.refused:
        seen, seen_csv = attention_figure(view.seen.weights, view.seen.letters,
                                          f"{view.seen.length} letters (the longest trained)", height)
    if not view.unseen.refused:
        unseen, unseen_csv = attention_figure(view.unseen.weights, view.unseen.letters,
                                              f"{view.unseen.length} letters (never seen)", height)
    return LengthFigures(frame, accuracy_chart(frame, view.trained), coinciding(frame, view.trained),
                         summary_frame(view, labels), seen, unseen, seen_csv, unseen_csv)


def summary_frame(view, labels: Mapping[str, str]) -> pd.DataFrame:
    """One row per encoding: accuracy on the card (held-out set) and here, inside the trained band, one
    letter past it and at the longest length tested (None where the model refuses the length)."""
    low, high = view.trained
    lengths = list(view.lengths)
    inside = [i for i, n in enumerate(lengths) if low <= n <= high]

    def at(values, n):
        value = values[lengths.index(n)] if n in lengths else np.nan
        return None if np.isnan(value) else float(value)

    rows = []
    for encoding, values in view.accuracy.items():
        rows.append({"encoding": labels.get(encoding, encoding), "model": view.models[encoding],
                     f"card: held-out, {low}–{high} letters": view.card[encoding],
                     f"here: {low}–{high} letters": float(np.mean(values[inside])),
                     f"at {high + 1}": at(values, high + 1), f"at {lengths[-1]}": at(values, lengths[-1])})
    return pd.DataFrame(rows)


# --- 2 · bytes against T --------------------------------------------------------------------------


@dataclass(frozen=True)
class MemoryFigures:
    frame: pd.DataFrame  # configuration, T, KV cache bytes, scores bytes
    kv_chart: alt.Chart
    scores_chart: alt.Chart
    table: pd.DataFrame  # the shapes, their sources and the bytes at the chosen T
    measured: pd.DataFrame


# Below the plot (beside it, a phone's chart had no plot left): three entries a row, one on a phone.
MEMORY_LEGEND_COLUMNS = {"expr": "width < 560 ? 1 : 3"}
MEMORY_CHART_PX = 460  # the whole chart, its x axis and legend included (Streamlit fits the spec's height)


def bytes_chart(frame: pd.DataFrame, column: str, title: str, what: str) -> alt.Chart:
    """Bytes against T, one line per configuration; configurations with equal bytes at every T share
    one line and one legend entry naming them all (`shared_lines`), so none is hidden under another."""
    lines = shared_lines(frame, column, what)
    names = list(dict.fromkeys(lines["line"]))
    first = dict(zip(lines["line"], lines["configuration"], strict=True))
    every = _colours(list(dict.fromkeys(frame["configuration"])))  # a model's colour, on both charts
    colour = colour_encoding("line", names, {name: every[first[name]] for name in names})
    colour.legend = alt.Legend(labelExpr=LEGEND_LINES)
    return alt.Chart(lines).mark_line(strokeWidth=3, point=True).encode(
        x=alt.X("T:Q", title="context length T (tokens, log scale)", scale=alt.Scale(type="log", base=2),
                axis=alt.Axis(format=",")),
        y=byte_y(column, title, lines[column].to_numpy()), color=colour,
        tooltip=[alt.Tooltip("models:N", title="configuration"), "T:Q", alt.Tooltip(f"{column}:Q", format=",")],
    ).properties(height=MEMORY_CHART_PX)


def memory_figures(view) -> MemoryFigures:
    rows = []
    for s, kv, scores in zip(view.shapes, view.kv, view.scores, strict=True):
        rows.append(pd.DataFrame({"configuration": s.name, "T": view.Ts, "KV cache bytes": kv,
                                  "scores bytes (one layer)": scores}))
    frame = pd.concat(rows, ignore_index=True)
    table = pd.DataFrame([{
        "configuration": s.name, "layers": s.n_layers, "query heads": s.n_heads, "key/value heads": s.n_kv_heads,
        "d_head": s.d_head,
        "longest input": "set by the encoding" if s.max_positions is None else f"{s.max_positions:,}",
        "KV cache": human_bytes(kv), "T × T scores, one layer": human_bytes(scores), "KV cache (bytes)": int(kv),
        "scores (bytes)": int(scores), "source": s.source}
        for s, kv, scores in zip(view.shapes, view.kv_at, view.scores_at, strict=True)])
    measured = pd.DataFrame({"T": view.measured_T, "peak": view.measured_peak,
                             "largest tensor": view.measured_largest, "T·T·h·4": view.formula})
    kv = configure(bytes_chart(frame, "KV cache bytes", "KV cache, all layers", "KV cache"), legend_orient="bottom",
                   legend_columns=MEMORY_LEGEND_COLUMNS)
    scores = configure(bytes_chart(frame, "scores bytes (one layer)", "T × T scores, one layer", "scores"),
                       legend_orient="bottom", legend_columns=MEMORY_LEGEND_COLUMNS)
    return MemoryFigures(frame, kv, scores, table, measured)


# --- 3 · grouped-query attention ------------------------------------------------------------------


@dataclass(frozen=True)
class GqaFigures:
    grid: go.Figure
    frame: pd.DataFrame  # query head, key/value head, query, key, weight
    table: pd.DataFrame


PRESENT_GQA_PX = 520  # presenting, the query heads' grids end on a 720 px screen under a step's answer
GQA_COLUMNS = 4  # query heads side by side: 8 heads in two rows of four, each panel about as tall as wide
GQA_ROW_PX = 215  # at the desk, one row of panels (its title included)


def gqa_layout(heads: int) -> tuple[int, int]:
    """(rows, columns) of the query heads' panels, in reading order: at most GQA_COLUMNS a row."""
    columns = min(heads, GQA_COLUMNS)
    return -(-heads // columns), columns


def gqa_sharing(heads: int, kv_heads: int) -> str:
    """Where `gqa_grid` puts the query heads that share a key/value head, as a phrase."""
    per, (_, columns) = heads // kv_heads, gqa_layout(heads)
    if kv_heads == 1:
        return "all of them read the same one"
    if per == 1:
        return "here each reads one of its own"
    if per == columns:
        return "each row of grids shares one"
    return f"each {'pair' if per == 2 else 'group'} of grids side by side shares one"


def gqa_grid(weights: np.ndarray, group: np.ndarray) -> go.Figure:
    """One panel per query head (weights: heads × T × T), in reading order, so the heads that share a
    key/value head stand next to each other; each titled with its query head and the K/V head it reads,
    both numbered from 1 as the attention lesson numbers heads.  Positions are numbered from 0."""
    h, T = weights.shape[0], weights.shape[-1]
    rows, columns = gqa_layout(h)
    # "head", not "query head": four titles of "query head 1 · K/V 1" made a phone's chart 805 px wide
    titles = [f"head {head + 1} · K/V {group[head] + 1}" for head in range(h)]
    grid = make_subplots(rows=rows, cols=columns, subplot_titles=titles, horizontal_spacing=0.04,
                         vertical_spacing=0.14 if rows > 1 else 0.0)
    labels = list(range(T))
    for head in range(h):
        grid.add_trace(go.Heatmap(z=weights[head], x=labels, y=labels, zmin=0, zmax=1,
                                  colorscale=colour_list(SEQUENTIAL), showscale=head == 0, xgap=1, ygap=1,
                                  colorbar={"title": {"text": "weight"}, "thickness": 14},
                                  hovertemplate=f"query head {head + 1} (K/V {group[head] + 1}), query %{{y}} → "
                                                "key %{x}: %{z:.2f}<extra></extra>"),
                       row=head // columns + 1, col=head % columns + 1)
    ticks = {"tickmode": "array", "tickvals": labels[::2], "ticktext": [str(t) for t in labels[::2]]}
    grid.update_yaxes(autorange="reversed", showticklabels=False)
    grid.update_xaxes(showticklabels=False)
    grid.update_yaxes(showticklabels=True, title_text="query", col=1, **ticks)
    grid.update_xaxes(showticklabels=True, title_text="key", row=rows, **ticks)
    grid.update_annotations(font_size=FONT_SIZE - 2)
    height = 90 + GQA_ROW_PX * rows
    grid.update_layout(height=height, margin={"l": 10, "r": 10, "t": 40, "b": 10}, font={"size": FONT_SIZE},
                       plot_bgcolor="rgba(0,0,0,0)", meta={PRESENT_HEIGHT: min(height, PRESENT_GQA_PX)})
    return grid


def gqa_figures(view) -> GqaFigures:
    h, T = view.heads, view.weights.shape[-1]
    grid = gqa_grid(view.weights, view.group)
    q, t, s = np.meshgrid(np.arange(h), np.arange(T), np.arange(T), indexing="ij")
    frame = pd.DataFrame({"query head": q.ravel() + 1, "key/value head": view.group[q.ravel()] + 1,  # as titled
                          "query": t.ravel(), "key": s.ravel(), "weight": view.weights.ravel()})
    names = {h: "multi-head (g = h)", 1: "multi-query (g = 1)"}
    table = pd.DataFrame([{
        "key/value heads g": f"{c}: {names.get(c, 'grouped-query')}", "this layer, T = 8 (32-bit)": human_bytes(here),
        "7B shape: K/V heads": full_heads, f"7B shape: cache at T = {view.full_T:,} (16-bit)": human_bytes(full)}
        for c, here, full, full_heads in zip(view.kv_counts, view.cache_here, view.cache_full, view.full_kv_heads,
                                             strict=True)])
    return GqaFigures(grid, frame, table)


# --- 4 · tiled attention --------------------------------------------------------------------------


@dataclass(frozen=True)
class TiledFigures:
    weights: go.Figure
    state: go.Figure
    bytes_chart: alt.LayerChart
    frame: pd.DataFrame  # the weights read so far (CSV)
    state_frame: pd.DataFrame


PRESENT_TILED_PX = 320  # presenting, the two tiled figures end on a 720 px screen under the step's answer


def tiled_figures(view) -> TiledFigures:
    T, block, shown = view.T, view.block, view.shown
    labels = [str(t) for t in range(T)]
    stop = min(shown * block, T)
    figure = heatmap(view.weights_so_far, x_labels=labels, y_labels=labels, x_title="key", y_title="query",
                     value_name="weight so far", zmin=0, zmax=1, annotate=False, height=460,
                     present_height=PRESENT_TILED_PX,
                     title=f"After key block {shown} of {view.n_blocks}: keys 0–{stop - 1} read")
    figure.add_shape(type="rect", x0=(shown - 1) * block - 0.5, x1=stop - 0.5, y0=-0.5, y1=T - 0.5,
                     line={"color": OKABE_ITO["vermillion"], "width": 4})
    # a block by its number under an axis titled once: "block 1 block 2 block 3" ran together and past the edge
    blocks = [str(b + 1) for b in range(view.n_blocks)]
    state = make_subplots(rows=1, cols=2, subplot_titles=("running max m, per block", "running sum ℓ, per block"),
                          horizontal_spacing=0.12)
    for col, values in ((1, view.running_max), (2, view.running_sum)):
        shownv = np.where(np.arange(view.n_blocks)[:, None] < shown, values, np.nan).T  # (T, blocks)
        shownv = np.where(np.isfinite(shownv), shownv, np.nan)
        state.add_trace(go.Heatmap(z=shownv, x=blocks, y=labels, colorscale=colour_list(SEQUENTIAL), xgap=1, ygap=1,
                                   texttemplate="%{z:.2f}" if T <= 16 else None, showscale=False,
                                   hovertemplate="query %{y}, after key block %{x}: %{z:.3f}<extra></extra>"),
                        row=1, col=col)
    state.update_yaxes(autorange="reversed", dtick=1)
    state.update_xaxes(type="category")  # the blocks' numbers; the panel titles say what they count
    state.update_yaxes(title_text="query", col=1)
    # the right panel's title under the toolbar's band, not behind its buttons
    state.update_layout(height=460 + TOOLBAR_PX, margin={"l": 10, "r": 10, "t": 40 + TOOLBAR_PX, "b": 10},
                        font={"size": FONT_SIZE - 2}, meta={PRESENT_HEIGHT: PRESENT_TILED_PX})
    curve = pd.concat([
        pd.DataFrame({"T": view.Ts, "bytes": view.bytes_plain, "what": "plain: T × T scores"}),
        pd.DataFrame({"T": view.Ts, "bytes": view.bytes_tiled, "what": f"tiled: T × {block} scores"}),
    ])
    points = pd.concat([
        pd.DataFrame({"T": view.measured_T, "bytes": view.measured_plain, "what": "plain, measured"}),
        pd.DataFrame({"T": view.measured_T, "bytes": view.measured_tiled,
                      "what": f"tiled, measured (block {view.measured_block})"}),
    ])
    names = [*dict.fromkeys(curve["what"]), *dict.fromkeys(points["what"])]
    colour = colour_encoding("what", names, _colours(names), title=None)
    x = alt.X("T:Q", title="sequence length T (log scale)", scale=alt.Scale(type="log", base=2),
              axis=alt.Axis(format=","))
    y = byte_y("bytes", "bytes (log scale)", np.concatenate([curve["bytes"], points["bytes"]]))
    chart = alt.layer(alt.Chart(curve).mark_line(strokeWidth=3).encode(x=x, y=y, color=colour),
                      alt.Chart(points).mark_point(size=120, filled=True).encode(x=x, y=y, color=colour))
    state_frame = pd.DataFrame({"block": np.repeat(np.arange(1, view.n_blocks + 1), T),
                                "query": np.tile(np.arange(T), view.n_blocks),
                                "running max": view.running_max.ravel(), "running sum": view.running_sum.ravel()})
    frame = pd.DataFrame(view.weights_so_far, columns=labels).rename_axis("query").reset_index()
    # the whole chart, legend included (340 px left a presented plot too little: its top was cut off)
    return TiledFigures(figure, state, configure(chart.properties(height=MEMORY_CHART_PX), legend_orient="bottom",
                                                 legend_columns=phone_columns(2, 1)), frame, state_frame)


# --- 5 · sliding windows --------------------------------------------------------------------------


@dataclass(frozen=True)
class WindowFigures:
    masks: go.Figure
    paths: alt.Chart
    frame: pd.DataFrame  # the three masks, one row per cell
    paths_frame: pd.DataFrame  # window → layers


def window_figures(view) -> WindowFigures:
    T = view.T
    titles = ("causal", f"sliding window of {view.window}",
              f"reach after {view.layers} layer{'s' if view.layers > 1 else ''}")
    # each panel numbers its own rows: the gap holds them clear of the panel to the left on a phone
    masks = make_subplots(rows=1, cols=3, subplot_titles=titles,
                          horizontal_spacing=column_gap([str(T - 1)], FONT_SIZE - 2, minimum=0.04))
    for col, mask in enumerate((view.causal, view.sliding, view.reach), start=1):
        masks.add_trace(go.Heatmap(z=mask.astype(float), colorscale=[[0, "#f2f2f2"], [1, OKABE_ITO["blue"]]],
                                   showscale=False, xgap=1, ygap=1, zmin=0, zmax=1,
                                   hovertemplate="query %{y} → key %{x}: %{z}<extra></extra>"), row=1, col=col)
    masks.update_yaxes(autorange="reversed", scaleanchor="x", constrain="domain")
    masks.update_yaxes(title_text="query (position t)", col=1)
    masks.update_xaxes(title_text="key (position s)")
    masks.update_layout(height=420 + TOOLBAR_PX, margin={"l": 10, "r": 10, "t": 40 + TOOLBAR_PX, "b": 10},
                        font={"size": FONT_SIZE - 2})  # the right panel's title under the toolbar's band
    paths = pd.DataFrame({"window": view.windows, "layers": view.paths})
    chart = alt.Chart(paths.dropna()).mark_line(point=True, strokeWidth=3, color=OKABE_ITO["blue"]).encode(
        x=alt.X("window:Q", title="window (positions seen, itself included)"),
        y=alt.Y("layers:Q", title=f"layers before {T - 1} reads 0"),
        tooltip=["window:Q", "layers:Q"]).properties(height=300)
    rows = [(name, t, s, bool(mask[t, s])) for name, mask in (("causal", view.causal), ("sliding", view.sliding),
                                                             ("reach", view.reach)) for t in range(T) for s in range(T)]
    frame = pd.DataFrame(rows, columns=["mask", "query", "key", "may read"])
    return WindowFigures(masks, configure(chart), frame, paths)
