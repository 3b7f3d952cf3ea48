"""The length lesson's memory charts in Chromium, at the desk (1400×900) and on a phone (390×844):
the byte axes read in units (never "10000 GB"), their plots keep a readable height under the legend
below them, and the legend names Mistral-7B and Llama-3-8B on the one line they share."""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import require_chromium
from tests.browser.test_browser import assert_no_exception, open_page
from tests.browser.test_present_browser import vega_drawn

BYTE_LABEL = re.compile(r"^([\d.,]+) (B|kB|MB|GB|TB)$")
MIN_PLOT_PX = 100  # the distance between a byte axis's lowest and highest tick label

# Per chart with a byte axis (its title names bytes): its tick labels with their heights, and its legend's labels.
CHARTS_JS = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')].map((chart) => ({
  axes: [...chart.querySelectorAll('g.role-axis')].map((axis) => ({
    title: [...axis.querySelectorAll('g.role-axis-title text')].map((t) => t.textContent).join(' '),
    labels: [...axis.querySelectorAll('g.role-axis-label text')].map((t) => ({
      text: t.textContent, y: t.getBoundingClientRect().top}))})),
  legend: [...chart.querySelectorAll('g.role-legend-label text')].map((t) =>
    [...t.querySelectorAll('tspan')].map((s) => s.textContent).join(' ') || t.textContent),
}))"""


@pytest.mark.parametrize("viewport", [{"width": 1400, "height": 900}, {"width": 390, "height": 844}],
                         ids=["desk", "phone"])
def test_length_memory_charts_read_bytes_in_units_and_name_every_model(viewport, new_page, app_url):
    require_chromium()
    page = new_page()
    page.set_viewport_size(viewport)
    page = open_page(lambda: page, f"{app_url}/length")
    assert_no_exception(page, "length")
    vega_drawn(page)
    charts = page.evaluate(CHARTS_JS)
    byte_axes = [(chart, axis) for chart in charts for axis in chart["axes"]
                 if any(BYTE_LABEL.match(label["text"]) for label in axis["labels"])]
    assert len(byte_axes) >= 3, "the KV cache, the scores and the tiled bytes charts"
    for _, axis in byte_axes:
        for label in axis["labels"]:
            number, _ = BYTE_LABEL.match(label["text"]).groups()
            assert float(number.replace(",", "")) < 1000, f"{axis['title']}: {label['text']} (use the next unit)"
        heights = [label["y"] for label in axis["labels"]]
        assert max(heights) - min(heights) >= MIN_PLOT_PX, f"{axis['title']}: the plot is squeezed ({heights})"
    kv_legend = next(chart["legend"] for chart, axis in byte_axes if "KV cache" in axis["title"])
    assert "Mistral-7B (GQA) and Llama-3-8B (GQA) (same KV cache)" in kv_legend, kv_legend
