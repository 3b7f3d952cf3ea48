"""The depth lesson in Chromium on a projector (1280×720, presenting): step 4's answer quotes two small
numbers (post-norm's gradient shrinks by 0.25 orders of magnitude, pre-norm's grows by 0.17) that the
line chart's axis of 27 powers of ten could not show; after Reveal, both are printed beside their bars on
the first screen, and the line chart's ticks read 10⁻²⁰, never "1e-20", as Vega draws them."""

from __future__ import annotations

import re

from explorer.kit.steps import load_steps
from harness.claims import answer
from tests.browser.conftest import require_chromium
from tests.browser.test_browser import assert_no_exception, wait_until_settled
from tests.browser.test_present_browser import PROJECTOR, press_when_the_clicker_listens, projector_page, vega_drawn

__all__ = ["projector_page"]  # the fixture, used here by name

# The index-th Vega-Lite chart on the page (0: the gradient lines, 1: the bars beside them): the texts of its
# axis labels and of its marks, each with its bottom edge.
TEXTS_JS = """(index) => {
  const chart = document.querySelectorAll('[data-testid="stVegaLiteChart"]')[index];
  if (!chart) return null;
  const texts = (selector) => [...chart.querySelectorAll(selector)].filter((t) => t.textContent.trim())
    .map((t) => ({text: t.textContent, bottom: t.getBoundingClientRect().bottom}));
  return {labels: texts('g.role-axis-label text'), marks: texts('g.role-mark text')};
}"""
POWER = re.compile(r"^(1|10|10⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)$")


def test_step_4_prints_the_numbers_its_answer_quotes_on_the_first_screen(projector_page, app_url):
    require_chromium()
    step = load_steps("depth")[3]
    said = answer("depth", step)
    quoted = re.findall(r"(shrinks|grows) by (\d\.\d\d)", said)
    assert len(quoted) == 2, said  # post-norm's and pre-norm's
    page = projector_page(f"{app_url}/depth?present=1&step=4")
    press_when_the_clicker_listens(page, "PageDown")  # the clicker's Reveal
    page.locator('[data-testid="stAlert"]').filter(has_text=said[:30]).first.wait_for(timeout=30_000)
    wait_until_settled(page, 0, "revealing step 4")
    assert_no_exception(page, "revealing step 4")
    vega_drawn(page)
    bars = page.evaluate(TEXTS_JS, 1)
    printed = {mark["text"]: mark["bottom"] for mark in bars["marks"]}
    for direction, number in quoted:
        shown = number if direction == "shrinks" else f"−{number}"
        assert shown in printed, f"{shown} is not printed beside its bar: {sorted(printed)}"
        assert printed[shown] <= PROJECTOR["height"], f"{shown} is printed at {printed[shown]:.0f} px, off the screen"
    ticks = [label["text"] for label in page.evaluate(TEXTS_JS, 0)["labels"]]
    def counted(t):  # a layer number of the x axis ("10²".isdigit() is True too: superscripts are digits)
        return t.isascii() and t.isdigit()

    powers = [t for t in ticks if not counted(t) or t in ("1", "10")]  # the y axis's; the x axis counts layers
    assert any("⁻" in t for t in powers), ticks
    assert all(POWER.match(t) for t in powers if not counted(t)), ticks
    assert not any("e" in t for t in ticks), ticks
