"""explorer.lessons.gradients.charts: the diagram passes Plotly's full validation and labels each input with
its path length, at any sequence length."""

import plotly.graph_objects as go
import pytest

from explorer.lessons.gradients import measures as gv
from explorer.lessons.gradients.charts import path_frame, unrolled_figure


def validated(fig: go.Figure) -> dict:
    return go.Figure(fig.to_dict()).to_dict()


@pytest.mark.parametrize("T", [1, 5, 11, 12, 512])
def test_unrolled_figure_is_valid_and_labels_the_path_lengths(T):
    spec = validated(unrolled_figure(gv.path_lengths(T, "rnn"), gv.path_lengths(T, "transformer")))
    texts = [a["text"] for a in spec["layout"]["annotations"]]
    assert str(T) in texts, "x_0 is T steps from the loss in the loop"
    markers = [t for t in spec["data"] if t.get("marker", {}).get("coloraxis")]
    loop, attention = (list(t["marker"]["color"]) for t in markers)
    assert loop[0] == T and loop[-1] == 1 and set(attention) == {1}
    if T > 11:
        assert "…" in texts


def test_path_frame_lists_both_path_lengths():
    frame = path_frame(gv.path_lengths(4, "rnn"), gv.path_lengths(4, "transformer"))
    assert frame.columns.tolist() == ["t", "RNN path length", "attention path length"]
    assert frame["RNN path length"].tolist() == [4, 3, 2, 1] and set(frame["attention path length"]) == {1}
