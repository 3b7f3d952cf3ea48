"""Record what a page drew, so that the floor app can draw the same thing from precomputed data.

A profile is the list of elements one run of a page sent (in order, main area or sidebar), turned
into ready-to-draw Python objects: Plotly specs with their arrays decoded back to numpy, Vega-Lite
specs with their data as pandas DataFrames, dataframes, markdown, alerts, and widgets with their
labels and options.  The floor app (benchmarks/floor_app.py) loads a profile once and draws it on
every rerun through the same public Streamlit calls the pages use, so the floor pays for
serialising and sending the same number and size of figures, and nothing else.
"""

from __future__ import annotations

import base64
import json
import pickle
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["Item", "draw_item", "load_profile", "profile_summary", "record_profile", "save_profile"]


@dataclass
class Item:
    kind: str  # plotly, vega, dataframe, markdown, alert, block, slider, select_slider, selectbox, radio,
    #            checkbox, text_area, button, download_button, other
    sidebar: bool
    payload: object


def _decode_typed_arrays(value):
    """Plotly's JSON encodes numpy arrays as {dtype, bdata[, shape]}: decode them back to arrays."""
    if isinstance(value, dict):
        if "bdata" in value and "dtype" in value:
            flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"])).copy()
            shape = value.get("shape")
            if isinstance(shape, str):
                shape = [int(n) for n in shape.split(",")]
            return flat.reshape(shape) if shape else flat
        return {k: _decode_typed_arrays(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode_typed_arrays(v) for v in value]
    return value


def _arrow_to_pandas(data: bytes):
    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    return convert_arrow_bytes_to_pandas_df(data)


def record_profile(elements, base_url: str) -> list[Item]:
    """Turn a run's (delta_path, Element) list into profile items (fetching download payloads)."""
    items: list[Item] = []
    for path, element in elements:
        sidebar = bool(path) and path[0] == 1
        kind = "__block__" if element is None else element.WhichOneof("type")
        if kind == "plotly_chart":
            items.append(Item("plotly", sidebar, _decode_typed_arrays(json.loads(element.plotly_chart.spec))))
        elif kind == "vega_lite_chart":
            proto = element.vega_lite_chart
            spec = json.loads(proto.spec)
            datasets = {d.name: _arrow_to_pandas(d.data.data) for d in proto.datasets}
            data = _arrow_to_pandas(proto.data.data) if proto.HasField("data") and proto.data.data else None
            items.append(Item("vega", sidebar, (spec, datasets, data)))
        elif kind == "dataframe":
            items.append(Item("dataframe", sidebar, _arrow_to_pandas(element.dataframe.arrow_data.data)))
        elif kind in ("markdown", "heading"):
            items.append(Item("markdown", sidebar, getattr(element, kind).body))
        elif kind == "alert":
            items.append(Item("alert", sidebar, (element.alert.format, element.alert.body)))
        elif kind == "slider":
            p = element.slider
            if p.options:
                items.append(Item("select_slider", sidebar, (p.label, list(p.options))))
            else:
                items.append(Item("slider", sidebar, (p.label, p.min, p.max, p.step, p.data_type)))
        elif kind in ("selectbox", "radio"):
            p = getattr(element, kind)
            items.append(Item(kind, sidebar, (p.label, list(p.options))))
        elif kind == "checkbox":
            items.append(Item("checkbox", sidebar, (element.checkbox.label, element.checkbox.type)))
        elif kind in ("text_area", "text_input"):
            p = getattr(element, kind)
            items.append(Item("text_area", sidebar, (p.label, p.default, p.max_chars)))
        elif kind == "button":
            items.append(Item("button", sidebar, element.button.label))
        elif kind == "page_link":
            items.append(Item("markdown", sidebar, element.page_link.label))
        elif kind == "download_button":
            p = element.download_button
            data = b""
            if p.url:
                try:
                    with urllib.request.urlopen(base_url.rstrip("/") + p.url, timeout=10) as response:
                        data = response.read()
                except OSError:
                    data = b"x" * 1024
            items.append(Item("download_button", sidebar, (p.label, data)))
        elif kind == "__block__":
            items.append(Item("block", sidebar, None))
        else:
            items.append(Item("other", sidebar, kind))
    return items


def save_profile(items: list[Item], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL))


def load_profile(path: Path) -> list[Item]:
    return pickle.loads(path.read_bytes())  # our own file, written by save_profile


def profile_summary(items: list[Item]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items:
        counts[item.kind] = counts.get(item.kind, 0) + 1
    return counts


ALERTS = {1: "error", 2: "warning", 3: "info", 4: "success"}


def draw_item(item: Item, where, key: str, plotly_spec: dict | None = None) -> None:
    """Draw one recorded element through the public Streamlit call the page used (`where` is st or
    st.sidebar): the floor apps' whole job.  `plotly_spec` replaces a Plotly item's recorded spec."""
    import plotly.graph_objects as go

    if item.kind == "plotly":
        where.plotly_chart(go.Figure(plotly_spec or item.payload, _validate=False), width="stretch", key=key)
    elif item.kind == "vega":
        spec, datasets, data = item.payload
        full = dict(spec)
        if datasets:
            full["datasets"] = datasets
        where.vega_lite_chart(data, spec=full, width="stretch", key=key)
    elif item.kind == "dataframe":
        where.dataframe(item.payload)
    elif item.kind == "markdown":
        where.markdown(item.payload)
    elif item.kind == "alert":
        getattr(where, ALERTS.get(item.payload[0], "info"))(item.payload[1])
    elif item.kind == "block":
        where.container()
    elif item.kind == "slider":
        label, low, high, step, data_type = item.payload
        if data_type == 0:  # Slider.DataType.INT: keep the number type of the original
            low, high, step = int(low), int(high), int(step)
        where.slider(label, min_value=low, max_value=high, step=step, key=key)
    elif item.kind == "select_slider":
        label, options = item.payload
        where.select_slider(label, options=options, key=key)
    elif item.kind == "selectbox":
        label, options = item.payload
        where.selectbox(label, options, key=key)
    elif item.kind == "radio":
        label, options = item.payload
        where.radio(label, options, key=key, horizontal=True)
    elif item.kind == "checkbox":
        where.toggle(item.payload[0], key=key)
    elif item.kind == "text_area":
        label, default, max_chars = item.payload
        where.text_area(label, default, max_chars=max_chars or None, key=key)
    elif item.kind == "button":
        where.button(item.payload or "button", key=key)
    elif item.kind == "download_button":
        label, data = item.payload
        where.download_button(label, data=data, file_name="data.csv", key=key, on_click="ignore")
