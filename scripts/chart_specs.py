"""Snapshot every chart a page draws, for a fixed set of URLs, so a refactor can prove that the pages
are unchanged: run it before (`--save before.json`) and after (`--compare before.json`).

Each page is run with AppTest at its defaults and at two other settings; the JSON spec of every
Plotly and Vega-Lite chart, the data of every dataframe and the text of every markdown/caption is
recorded.  Numbers are rounded to 9 significant digits so that float noise below that does not count.

    .venv/bin/python scripts/chart_specs.py --save /tmp/before.json
    .venv/bin/python scripts/chart_specs.py --compare /tmp/before.json
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# page script -> list of query-parameter sets: the defaults and two other settings.
VIEWS: dict[str, list[dict[str, str]]] = {
    "app.py": [{}],  # the home page, run through the navigation its links need
    "explorer/lessons/lookup/lookup.py": [{}, {"scale": "true", "temperature": "2.5"}, {"q1": "-1.5", "q2": "2.0"}],
    "explorer/lessons/attention/attention.py": [{}, {"task": "sort", "mask": "none", "heads": "4"},
                               {"task": "coreference", "layer": "1", "head": "3", "compare": "the other weights"}],
    "explorer/lessons/positions/positions.py": [{}, {"kind": "learned", "positions": "20", "d_model": "16"},
                               {"scheme": "ALiBi", "att_block": "encoder"}],
    "explorer/lessons/gradients/gradients.py": [{}, {"T": "128", "width": "16", "init": "orthogonal", "gain": "1.5"},
                               {"bptt": "16", "seeds": "2", "dep_kind": "lstm"}],
    "explorer/lessons/depth/depth.py": [{}, {"layers": "6", "width": "16"}, {"T": "32", "seeds": "2"}],
    "explorer/lessons/cost/cost.py": [{}, {"T": "64", "k": "5", "layers": "6"}, {"T": "2048", "time_T": "512"}],
}


# Wall-clock measurements (the cost page's stopwatch) differ from run to run: recorded as a marker.
MEASURED_COLUMNS = {"microseconds per position", "milliseconds", "seconds", "timed runs"}
MEASURED_TEXT = ("One forward pass of one layer", "1 measurement(s) left out", "2 measurement(s) left out",
                 "3 measurement(s) left out")


def _measured(table: dict) -> dict:
    return {k: ("<measured>" if k in MEASURED_COLUMNS else v) for k, v in table.items()}


def _round(value):
    if isinstance(value, float):
        return f"{value}" if not np.isfinite(value) else float(f"{value:.9g}")
    if isinstance(value, list):
        return [_round(v) for v in value]
    if isinstance(value, dict):
        if "bdata" in value and "dtype" in value:  # a Plotly typed array: decode and round
            flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
            return {"typed": [_round(float(v)) for v in flat.astype(float)], "shape": value.get("shape")}
        return {k: _round(v) for k, v in value.items()}
    return value


def _vega(proto) -> dict:
    spec = json.loads(proto.spec)
    # Dataset names are content hashes of the data, which is compared itself; drop the names.
    datasets = spec.pop("datasets", {})
    data = [_measured(v) if isinstance(v, dict) else [_measured(r) for r in v] for _, v in sorted(datasets.items())]
    spec.get("data", {}).pop("name", None)
    for layer in spec.get("layer", []):
        layer.get("data", {}).pop("name", None)
    for arrow in proto.datasets:
        from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

        data.append(_measured(convert_arrow_bytes_to_pandas_df(arrow.data.data).to_dict(orient="list")))
    return {"spec": _round(spec), "data": _round(data)}


def snapshot_page(path: str, params: dict[str, str]) -> dict:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / path), default_timeout=120)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    if at.exception:
        return {"exception": [e.value for e in at.exception]}
    out = {
        "plotly": [_round(json.loads(el.proto.spec)) for el in at.get("plotly_chart")],
        "vega": [_vega(el.proto) for el in at.get("vega_lite_chart")],
        "dataframes": [_round(_measured(el.value.to_dict(orient="list"))) for el in at.dataframe],
        "text": [el.value for el in (*at.markdown, *at.caption, *at.info, *at.warning, *at.error)
                 if not el.value.startswith(MEASURED_TEXT)],
        "tables": [_round(el.value.to_dict(orient="list")) for el in at.table],
    }
    return json.loads(json.dumps(out, default=str))


def snapshot() -> dict:
    import torch

    torch.set_num_threads(1)
    return {f"{path}?{json.dumps(params, sort_keys=True)}": snapshot_page(path, params)
            for path, views in VIEWS.items() for params in views}


def _diff(a, b, where: str, out: list[str]) -> None:
    if len(out) > 40:
        return
    if type(a) is not type(b):
        out.append(f"{where}: {type(a).__name__} != {type(b).__name__}")
    elif isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                out.append(f"{where}.{key}: only in {'after' if key in b else 'before'}")
            else:
                _diff(a[key], b[key], f"{where}.{key}", out)
    elif isinstance(a, list):
        if len(a) != len(b):
            out.append(f"{where}: length {len(a)} != {len(b)}")
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            _diff(x, y, f"{where}[{i}]", out)
    elif a != b:
        out.append(f"{where}: {str(a)[:80]!r} != {str(b)[:80]!r}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--save", type=Path, help="write the snapshot here")
    group.add_argument("--compare", type=Path, help="compare with a saved snapshot; exit 1 on any difference")
    parser.add_argument("--ignore-text", action="store_true", help="compare charts and data only, not text")
    args = parser.parse_args()
    current = snapshot()
    if args.save:
        args.save.write_text(json.dumps(current))
        print(f"saved {len(current)} views to {args.save}")
        return 0
    before = json.loads(args.compare.read_text())
    failures = 0
    for view in sorted(set(before) | set(current)):
        a, b = before.get(view), current.get(view)
        if args.ignore_text:
            a = {k: v for k, v in (a or {}).items() if k != "text"}
            b = {k: v for k, v in (b or {}).items() if k != "text"}
        out: list[str] = []
        _diff(a, b, "", out)
        n = {k: len(v) for k, v in (b or {}).items() if isinstance(v, list)}
        print(f"{'same' if not out else 'DIFFERENT'}  {view}  {n}")
        for line in out[:40]:
            print("    " + line)
        failures += bool(out)
    print(f"{failures} of {len(set(before) | set(current))} views differ")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
