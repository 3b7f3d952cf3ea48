"""Every download button of every page delivers a CSV when clicked (the CSV is made only then)."""

import csv
import io

import numpy as np
import pytest

from explorer.lessons import LESSONS
from explorer.lessons.attention.models import PRESETS
from harness.apptest import downloaded_text, run_page_with_downloads

PAGES = [lesson.path for lesson in LESSONS]


def rows_of(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


@pytest.mark.parametrize("path", PAGES)
def test_every_download_button_delivers_a_table(path):
    at, manager = run_page_with_downloads(path)
    buttons = at.get("download_button")
    for button in buttons:
        rows = rows_of(downloaded_text(manager, button))
        assert len(rows) >= 3, f"{button.proto.label}: {rows[:3]}"
        assert len({len(row) for row in rows}) == 1, f"{button.proto.label}: ragged rows"
        assert all(cell.strip() for cell in rows[0][1:]), f"{button.proto.label}: a column without a name"


def test_the_attention_download_is_the_enlarged_head():
    at, manager = run_page_with_downloads("explorer/lessons/attention/attention.py",
                                          {"task": "coreference", "layer": "2", "head": "3"})
    button = next(b for b in at.get("download_button") if "head" in b.proto.label)
    rows = rows_of(downloaded_text(manager, button))
    words = PRESETS["coreference"][0].split()
    assert [row[0] for row in rows[1:]] == words and rows[0][1:] == words
    weights = np.array([[float(v) for v in row[1:]] for row in rows[1:]])
    np.testing.assert_allclose(weights.sum(1), 1, atol=1e-5)
    # the model's layer-2 head-3 row for "it" picks the animal for "tired" (see the model card)
    assert weights[words.index("it")].argmax() == words.index("animal")


def test_the_gradient_download_has_one_row_per_network_and_position():
    at, manager = run_page_with_downloads("explorer/lessons/gradients/gradients.py", {"T": "16"})
    button = next(b for b in at.get("download_button") if b.proto.label == "Download the curves (CSV)")
    rows = rows_of(downloaded_text(manager, button))
    assert rows[0][:2] == ["model", "t"] and len(rows) == 1 + 4 * 16


@pytest.mark.parametrize(("link", "expected"), [({}, "png"), ({"image": "svg"}, "svg")])
def test_the_camera_button_saves_the_format_chosen_in_the_sidebar(link, expected):
    """Every Plotly chart's toolbar holds just the camera (and Streamlit's full-screen button, which
    `modeBarButtons` would drop); it saves PNG by default, SVG when chosen (the choice is in the link,
    like every other setting)."""
    import json

    from harness.apptest import run_page

    at = run_page("explorer/lessons/depth/depth.py", link)
    configs = [json.loads(chart.proto.config) for chart in at.get("plotly_chart")]
    assert configs
    for config in configs:
        assert config["displayModeBar"] is True and "modeBarButtons" not in config
        assert "toImage" not in config["modeBarButtonsToRemove"] and "zoom2d" in config["modeBarButtonsToRemove"]
        assert config["toImageButtonOptions"]["format"] == expected
    assert at.sidebar.radio(key="image").value == expected
