"""Helpers for AppTest page tests: run a page, read figure data back from the rendered charts."""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import json
from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]


def page_test(path: str, query_params: dict[str, str] | None = None) -> AppTest:
    """An AppTest for a page script (path relative to the project root), not yet run."""
    at = AppTest.from_file(str(ROOT / path), default_timeout=60)
    for key, value in (query_params or {}).items():
        at.query_params[key] = value
    return at


def run_page(path: str, query_params: dict[str, str] | None = None) -> AppTest:
    """Run a page once and fail loudly if it raised."""
    at = page_test(path, query_params).run()
    assert_no_exception(at)
    return at


def assert_no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def plotly_figures(at: AppTest) -> list[dict]:
    """The JSON spec of every Plotly chart on the page, in order."""
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def plotly_figure(at: AppTest, key: str) -> dict:
    """The JSON spec of the Plotly chart drawn with `key`."""
    found = [json.loads(el.proto.spec) for el in at.get("plotly_chart") if el.key == key]
    assert len(found) == 1, f"{len(found)} Plotly charts with key {key!r}"
    return found[0]


def plotly_array(value) -> np.ndarray:
    """Decode a Plotly JSON array: a plain (nested) list, or a typed array {dtype, bdata, shape}."""
    if isinstance(value, dict) and "bdata" in value:
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        shape = value.get("shape")
        if isinstance(shape, str):
            shape = [int(n) for n in shape.split(",")]
        return flat.reshape(shape).astype(float) if shape else flat.astype(float)
    return np.array([[np.nan if v is None else v for v in row] for row in value], dtype=float)


def plotly_array_1d(value) -> np.ndarray:
    """Decode a one-dimensional Plotly JSON array (plain list or typed array)."""
    if isinstance(value, dict) and "bdata" in value:
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"])).astype(float)
    return np.array([np.nan if v is None else v for v in value], dtype=float)


def heatmap_z(at: AppTest, index: int = 0, trace: int = 0) -> np.ndarray:
    """The z matrix of a trace of the index-th Plotly chart (missing cells are NaN)."""
    return plotly_array(plotly_figures(at)[index]["data"][trace]["z"])


def vega_data(at: AppTest, index: int = 0):
    """The data table (pandas) behind the index-th Altair / Vega-Lite chart: an Arrow dataset
    (st.altair_chart) or a dataset inlined in the spec (explorer.kit.controls.altair_chart)."""
    proto = at.get("vega_lite_chart")[index].proto
    if len(proto.datasets):
        assert len(proto.datasets) == 1, "expected one dataset per chart"
        return convert_arrow_bytes_to_pandas_df(proto.datasets[0].data.data)
    inline = json.loads(proto.spec).get("datasets", {})
    assert len(inline) == 1, "expected one dataset per chart"
    return pd.DataFrame(next(iter(inline.values())))


def info_text(at: AppTest) -> str:
    """Every note the page shows: its info boxes (settings that could not be used) and warnings
    (text it could not read)."""
    return "\n".join(el.value for el in (*at.info, *at.warning))


def run_async(coroutine):
    """asyncio.run on a fresh thread: Playwright's sync API (the browser tests' session fixture)
    leaves an event loop running in the main thread, where asyncio.run refuses to start."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def run_page_with_downloads(path: str, query_params: dict[str, str] | None = None):
    """Run a page and keep the media manager that holds its deferred downloads, so a test can make
    the file a click would make (`downloaded_text`)."""
    from unittest.mock import patch

    from streamlit.runtime.media_file_manager import MediaFileManager

    managers = []

    class Recording(MediaFileManager):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            managers.append(self)

    with patch("streamlit.testing.v1.app_test.MediaFileManager", Recording):
        at = run_page(path, query_params)
    return at, managers[-1]


def downloaded_text(manager, button) -> str:
    """What clicking a deferred download button delivers, as text."""
    url = manager.execute_deferred(button.proto.deferred_file_id)
    file_id = url.rsplit("/", 1)[-1].split(".")[0]
    return manager.read_file(file_id).content.decode()
