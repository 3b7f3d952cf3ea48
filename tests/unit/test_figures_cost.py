"""explorer.figures.cost: the bars pass Plotly's full validation, the charts validate against the
Vega-Lite schema, and the tables hold the counts and timings given."""

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.analysis.timing import TIMED_LAYERS, Timing
from explorer.figures import cost as figures
from explorer.figures.common import frame_csv
from explorer.views.cost import complexity_rows, operations_curves, operations_lengths

pytestmark = pytest.mark.usefixtures("one_thread")  # as in the app: one torch thread


def validated(fig: go.Figure) -> dict:
    return go.Figure(fig.to_dict()).to_dict()


def test_cost_charts_and_table():
    rows = complexity_rows(100, 16, 3, 2)
    table = figures.complexity_frame(rows, 2)
    assert table["layer"].tolist()[0] == "CNN ×2" and table["exact"].tolist() == table["PyTorch count"].tolist()
    bars = validated(figures.cost_bars(rows))
    assert len(bars["data"]) == 4 and bars["layout"]["yaxis"]["type"] == "log"
    lengths = operations_lengths(100, 16)
    frame = figures.operations_frame(operations_curves(16, lengths), lengths)
    figures.operations_chart(frame, d=16, T=100).to_dict()
    timings = [Timing("rnn", 16, 8, 0.001, 3), Timing("attention", 16, 8, None, 0)]
    times = figures.timing_frame(timings, TIMED_LAYERS)
    figures.timing_chart(times, TIMED_LAYERS).to_dict()
    assert times["milliseconds"].iloc[0] == pytest.approx(1.0) and np.isnan(times["milliseconds"].iloc[1])
    assert frame_csv(times).splitlines()[0].startswith("layer,T,d,milliseconds")
