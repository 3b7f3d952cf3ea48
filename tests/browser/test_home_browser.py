"""The home page in Chromium loads the charts' code while it is read (explorer/serve/chart_code.py), so
the first lesson opened from it does not wait for Plotly's code; it shows no chart; and the sidebar
names every page whole."""

from __future__ import annotations

from explorer.serve.catalog import PAGES
from tests.browser.conftest import require_chromium
from tests.browser.test_browser import assert_no_exception, open_page

HOME_CHART_CODE_JS = """() => {
  const hidden = document.querySelector('.st-key-explorer-chart-code');
  const plot = hidden && hidden.querySelector('.js-plotly-plot');
  return Boolean(plot && plot._fullData) && getComputedStyle(hidden).display === 'none';
}"""
VISIBLE_CHARTS_JS = """() => [...document.querySelectorAll(
  '[data-testid="stPlotlyChart"], [data-testid="stVegaLiteChart"]')]
  .filter((chart) => chart.getBoundingClientRect().height > 0).length"""


def test_home_loads_the_charts_code_and_shows_no_chart(app_url, new_page):
    require_chromium()
    page = open_page(new_page, f"{app_url}/")
    assert_no_exception(page, "opening the home page")
    page.wait_for_function(HOME_CHART_CODE_JS, timeout=20_000)  # its one tiny Plotly chart is drawn, hidden
    assert page.evaluate(VISIBLE_CHARTS_JS) == 0, "the home page shows a chart"


# Every page's name in the sidebar's navigation whose text runs past its box (cut to "…").
CUT_NAV_JS = """() => [...document.querySelectorAll('[data-testid="stSidebarNav"] [data-testid="stSidebarNavLink"]')]
  .flatMap((link) => [...link.querySelectorAll('span')].filter((s) => s.scrollWidth > s.clientWidth + 1)
    .map((s) => s.textContent.trim()))"""


def test_every_lesson_is_named_whole_in_the_sidebar(app_url, new_page):
    """At a desk's 1400 px the sidebar names every lesson whole ("Cost: parameters, operations, st…"
    and "Self-attention, masking and he…" were cut)."""
    require_chromium()
    page = open_page(new_page, f"{app_url}/")
    names = page.locator('[data-testid="stSidebarNav"] [data-testid="stSidebarNavLink"]')
    assert names.count() == len(PAGES), f"{names.count()} pages in the sidebar, {len(PAGES)} in the catalog"
    assert page.evaluate(CUT_NAV_JS) == [], "names cut in the sidebar"
