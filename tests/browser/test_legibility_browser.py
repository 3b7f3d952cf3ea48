"""Projector legibility in a real browser (Debian Chromium), at a desk's 1400×900 and at a projector's
1280×720 with ?present=1: the attention grid's tick labels never overlap, whatever the token count
(each label's drawn outline, turned as it is drawn, is tested against every other label's of the
chart), are upright or slanted 45° (never turned 90°, which ran "<s>GFEDCBA" together), and stay
inside the chart (not cut at its bottom edge).  Also: Home accepts ?present=1."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.browser.conftest import require_chromium
from tests.browser.test_browser import assert_no_exception, open_page

SIZES = {"desk": ({"width": 1400, "height": 900}, ""), "projector": ({"width": 1280, "height": 720}, "present=1")}
RECALL_24 = "F A B E D C H G A B H C E D A G F B C H A E D ?"
INPUTS = {  # token count -> the attention page's link to a grid of that many input tokens
    7: "task=reverse&input_reverse=" + quote("A B C D E F G"),
    12: "task=induction&input_induction=" + quote("t12 t5 t20 t8 t1 t16 t12 t5 t20 t8 t1 t16"),
    24: "task=recall&input_recall=" + quote("your own text…") + "&text_recall=" + quote(RECALL_24),
    11: "task=coreference&input_coreference=" + quote("the animal didn't cross the street because it was too tired"),
}

# Every non-empty tick label of the grid as the four corners of its box on the screen (getBBox in the
# text's own coordinates, mapped through its transform, so a slanted label is a slanted rectangle),
# with the angle it is drawn at; and the chart's own box.
# A label on two lines (a staggered key label: an empty first line, the word on the second) is boxed by
# its lines that hold text, each on its own: the <text>'s box would span the empty line too.
TICKS_JS = """
(selector) => {
  const chart = document.querySelector(selector);
  if (!chart) return null;
  const labels = [...chart.querySelectorAll('.xtick text, .ytick text')]
    .filter(t => t.textContent.trim() && t.getBBox().width > 0);
  const inked = (t) => {
    const lines = [...t.querySelectorAll('tspan.line')].filter(s => s.textContent.trim());
    return lines.length ? lines : [t];
  };
  return {
    chart: (({left, top, right, bottom}) => ({left, top, right, bottom}))(chart.getBoundingClientRect()),
    labels: labels.flatMap(t => inked(t).map(part => {
      const b = part.getBBox(), m = t.getScreenCTM();
      const corner = (x, y) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f];
      return {text: part.textContent, angle: Math.round(Math.atan2(m.b, m.a) * 180 / Math.PI),
              quad: [corner(b.x, b.y), corner(b.x + b.width, b.y), corner(b.x + b.width, b.y + b.height),
                     corner(b.x, b.y + b.height)]};
    })),
  };
}
"""


def _axes(quad):
    """The two edge normals of a rectangle given as four corners."""
    return [(quad[i + 1][1] - quad[i][1], quad[i][0] - quad[i + 1][0]) for i in range(2)]


def overlap(a, b, slack: float = 1.0) -> bool:
    """Whether two (possibly turned) rectangles overlap by more than `slack` px (separating axis test).  A
    label's box is its line box, which holds the font's leading: two lines 1.3 em apart (a staggered label)
    share 0.6 px of box at 18 px with no glyph touching, so 1 px is allowed."""
    for nx, ny in _axes(a) + _axes(b):
        length = (nx * nx + ny * ny) ** 0.5 or 1.0
        pa = [(x * nx + y * ny) / length for x, y in a]
        pb = [(x * nx + y * ny) / length for x, y in b]
        if min(max(pa), max(pb)) - max(min(pa), min(pb)) <= slack:
            return False
    return True


def test_the_overlap_check_tells_touching_from_overlapping_labels():
    square = [(0, 0), (10, 0), (10, 10), (0, 10)]
    assert overlap(square, [(5, 5), (15, 5), (15, 15), (5, 15)])
    assert not overlap(square, [(11, 0), (21, 0), (21, 10), (11, 10)])
    turned = [(20, 0), (27, 7), (20, 14), (13, 7)]  # a diamond right of the square, clear of it
    assert not overlap(square, turned) and overlap([(0, 0), (16, 0), (16, 10), (0, 10)], turned)


def grid_labels(new_page, app_url: str, size: str, query: str, shots, name: str,
                charts: tuple[str, ...] = ("grid",)) -> dict[str, dict]:
    """Each of `charts` of the attention page opened once at `size` with `query`: its tick labels' boxes."""
    viewport, present = SIZES[size]
    page = new_page()
    page.set_viewport_size(viewport)
    page = open_page(lambda: page, f"{app_url}/attention?{'&'.join(filter(None, [query, present]))}")
    assert_no_exception(page, "opening the attention grid")
    found = {}
    for chart in charts:
        page.wait_for_selector(f".st-key-{chart} .xtick text", timeout=20_000)
        page.wait_for_timeout(600)  # Plotly finishes laying out after the first draw
        page.locator(f".st-key-{chart}").scroll_into_view_if_needed()
        page.wait_for_timeout(200)
        found[chart] = page.evaluate(TICKS_JS, f".st-key-{chart} [data-testid='stPlotlyChart']")
        page.locator(f".st-key-{chart}").screenshot(path=str(shots / f"{chart}-{name}-{size}.png"))
        assert found[chart] and found[chart]["labels"], f"the chart {chart!r} draws tick labels"
    return found


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("tokens", list(INPUTS))
def test_grid_tick_labels_never_overlap(tokens, size, new_page, app_url, screenshot_dir):
    """The layers × heads grid and the large head (one page, both measured): no two labels overlap, none is
    turned 90°, none is cut; the large head labels every token of up to 12 (upright, staggered where needed)."""
    require_chromium()
    for chart, found in grid_labels(new_page, app_url, size, INPUTS[tokens], screenshot_dir, str(tokens),
                                    ("grid", "head_large")).items():
        labels = found["labels"]
        clashes = [(a["text"], b["text"]) for i, a in enumerate(labels) for b in labels[i + 1:]
                   if overlap(a["quad"], b["quad"])]
        assert not clashes, f"{chart}: {len(clashes)} pairs of tick labels overlap, e.g. {clashes[:5]}"
        turned = sorted({label["angle"] for label in labels} - {0, -45, 45})
        assert not turned, f"{chart}: labels turned {turned}° (only upright or 45° are read on a projector)"
        box = found["chart"]
        outside = [label["text"] for label in labels
                   if any(not (box["left"] - 1 <= x <= box["right"] + 1 and box["top"] - 1 <= y <= box["bottom"] + 1)
                          for x, y in label["quad"])]
        assert not outside, f"{chart}: tick labels cut at the chart's edge: {outside[:8]}"
        shown = {label["text"] for label in labels}
        assert len(shown) >= 2, f"{chart}: too few labels left to read the axis: {sorted(shown)}"
        if chart == "head_large":
            assert not sorted({label["angle"] for label in labels} - {0}), "the large head's labels are upright"
            if tokens <= 12:
                x_labels = [label["text"] for label in labels][: len(labels) - tokens]  # x ticks come first
                assert len(labels) >= 2 * tokens - 1, f"every token labelled on both axes: {sorted(shown)}"
                assert x_labels


def test_home_takes_present_1_and_presents(new_page, app_url):
    require_chromium()
    page = new_page()
    page.set_viewport_size(SIZES["projector"][0])
    page = open_page(lambda: page, f"{app_url}/?present=1")
    assert_no_exception(page, "opening Home presenting")
    notes = " ".join(page.locator('[data-testid="stAlert"]').all_inner_texts())
    assert "not a setting of this page" not in notes, notes
    assert page.locator("#explorer-presenting").count() == 1, "presentation mode (its styles and keys) is on"
    assert "present=1" in page.url


def test_any_chart_opens_full_screen(new_page, app_url, screenshot_dir):
    """Every Plotly chart shows Streamlit's full-screen button in its always-visible toolbar (beside
    the camera), and it fills the screen with the chart; Vega-Lite charts have it in their toolbar."""
    require_chromium()
    page = new_page()
    page.set_viewport_size(SIZES["projector"][0])
    page = open_page(lambda: page, f"{app_url}/attention?present=1")
    page.wait_for_selector(".st-key-grid .modebar", timeout=20_000)
    button = page.locator('.st-key-grid .modebar-btn[data-title="Fullscreen"]')
    assert button.count() == 1 and button.is_visible(), "the full-screen button is shown without hovering"
    assert page.locator('.st-key-grid .modebar-btn[data-title="Download plot as a PNG"]').count() == 1
    button.click()
    page.wait_for_timeout(800)
    box = page.locator(".st-key-grid [data-testid='stPlotlyChart']").bounding_box()
    page.screenshot(path=str(screenshot_dir / "grid-fullscreen.png"))
    assert box["width"] > 0.9 * SIZES["projector"][0]["width"], f"full screen is {box['width']:.0f} px wide"
    page.locator('.modebar-btn[data-title="Close fullscreen"]').first.click()
    vega = open_page(new_page, f"{app_url}/cost")
    chart = vega.locator('[data-testid="stVegaLiteChart"]').first
    chart.wait_for(timeout=30_000)
    chart.scroll_into_view_if_needed()
    chart.hover()
    container = vega.locator('[data-testid="stElementContainer"]').filter(has=chart).last
    assert container.get_by_role("button", name="Fullscreen").count() >= 1
