"""The home page in Chromium loads the charts' code while it is read (explorer/serve/chart_code.py), so
the first lesson opened from it does not wait for Plotly's code; and it shows no chart."""

from __future__ import annotations

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
