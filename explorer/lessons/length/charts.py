"""Bytes on a log axis, for the length lesson's memory charts: ticks at whole powers of ten read in
decimal units (1 kB, 10 MB, 1 TB, never "10000 GB"), and lines that coincide drawn once, their legend
entry naming every configuration that shares them (a model hidden under another's line would read as
missing).  Handed frames and arrays; no model, no Streamlit."""

from __future__ import annotations

import math
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

__all__ = ["BYTES_LABEL", "LEGEND_LINES", "LINE_BREAK", "byte_ticks", "byte_y", "shared_lines"]

# A tick's value in bytes, in the units human_bytes writes (decimal): 1 TB, 100 GB, 10 MB, 1 kB, 512 B.
BYTES_LABEL = ("datum.value >= 1e12 ? format(datum.value / 1e12, '~g') + ' TB' : "
               "datum.value >= 1e9 ? format(datum.value / 1e9, '~g') + ' GB' : "
               "datum.value >= 1e6 ? format(datum.value / 1e6, '~g') + ' MB' : "
               "datum.value >= 1e3 ? format(datum.value / 1e3, '~g') + ' kB' : format(datum.value, '~g') + ' B'")
LINE_BREAK = "\n"  # between the lines of a shared line's legend label (`shared_lines`)
LEGEND_LINES = "split(datum.label, '\\n')"  # a legend's labelExpr: each LINE_BREAK starts a line
MAX_DECADES = 10  # more powers of ten than this (about 30 px apart at 300 px): every third only (1 kB, 1 MB, …)


def byte_ticks(values: np.ndarray) -> tuple[list[float], list[float]]:
    """(domain, ticks) of a log axis for these positive byte counts: the domain from the power of ten
    at or below the least to the one at or above the greatest; a tick at every power of ten in it, or,
    over more than MAX_DECADES, at every third (aligned on 1 kB, 1 MB, …) so each reads 1 of a unit."""
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values) & (values > 0)]
    low = math.floor(math.log10(values.min())) if values.size else 0
    high = max(math.ceil(math.log10(values.max())) if values.size else 1, low + 1)
    step = 1 if high - low <= MAX_DECADES else 3
    first = -(-low // step) * step
    return [10.0 ** low, 10.0 ** high], [10.0 ** k for k in range(first, high + 1, step)]


def byte_y(field: str, title: str, values: np.ndarray) -> alt.Y:
    """A y encoding of bytes on a log scale, its ticks from `byte_ticks`, labelled in decimal units."""
    domain, ticks = byte_ticks(values)
    return alt.Y(f"{field}:Q", title=title, scale=alt.Scale(type="log", domain=domain, nice=False),
                 axis=alt.Axis(values=ticks, labelExpr=BYTES_LABEL))


def _named_together(names: Sequence[str], what: str) -> str:
    """'A', or 'A\\nand B\\n(same KV cache)', or 'A,\\nB\\nand C\\n(same KV cache)': one name a line."""
    if len(names) == 1:
        return names[0]
    lines = [f"{n}," for n in names[:-2]] + [names[-2], f"and {names[-1]}", f"(same {what})"]
    return LINE_BREAK.join(lines)


def shared_lines(frame: pd.DataFrame, column: str, what: str, key: str = "configuration") -> pd.DataFrame:
    """`frame` (key, T, column, …) with one line per distinct series of `column`: configurations whose
    values are equal at every T share one, labelled with all their names (`line`, broken into lines
    at LINE_BREAK for the legend; `models`, the same on one line for the tooltip), in the order of
    their first configuration, which `key` holds."""
    names = list(dict.fromkeys(frame[key]))
    groups: list[list[str]] = []
    for name in names:
        values = frame.loc[frame[key] == name, column].to_numpy()
        match = next((g for g in groups if np.array_equal(frame.loc[frame[key] == g[0], column].to_numpy(), values)),
                     None)
        if match is None:
            groups.append([name])
        else:
            match.append(name)
    label = {name: _named_together(group, what) for group in groups for name in group}
    firsts = {group[0] for group in groups}
    lines = frame[frame[key].isin(firsts)][["T", column, key]].copy()
    lines["line"] = lines[key].map(label)
    lines["models"] = lines["line"].str.replace(LINE_BREAK, " ")
    return lines.reset_index(drop=True)
