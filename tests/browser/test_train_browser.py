"""The train-it-live page in Chromium: pressing Train starts a run in the server's background, and
the attention grid, the progress bar and the curves change while the page polls; Stop ends it.  A
clicker's Reveal (PageDown) starts a step's run too, and its next PageDown moves on during the run."""

from __future__ import annotations

import json
import time

from tests.browser.test_browser import (
    assert_no_exception,
    chart_data,
    full_page_screenshot,
    open_page,
    wait_until_settled,
)
from tests.browser.test_present_browser import PROJECTOR, press_when_the_clicker_listens

GRID_CHANGES = 2  # the grid must be redrawn with new weights at least this many times
WAIT_S = 80.0  # for those changes; a busy shared machine trains slowly

GRID_JS = """() => { const plot = document.querySelector('.js-plotly-plot');
  return plot && plot._fullData ? JSON.stringify(plot._fullData.map((t) => t.z)) : null; }"""
PROGRESS_JS = """() => document.querySelector('[data-testid="stProgress"]')?.innerText ?? null"""


def grid_weights(page) -> str | None:
    """The first chart's (the attention grid's) weights as drawn."""
    return page.evaluate(GRID_JS)


def wait_for_grid_changes(page) -> None:
    """Until the attention grid has been redrawn GRID_CHANGES times with new weights (bounded: WAIT_S)."""
    seen = {grid_weights(page)}
    deadline = time.monotonic() + WAIT_S
    while len(seen) <= GRID_CHANGES:
        assert time.monotonic() < deadline, f"the grid changed {len(seen) - 1} time(s) in {WAIT_S:.0f} s"
        seen.add(grid_weights(page))
        page.wait_for_timeout(250)


def test_train_redraws_the_grid_while_the_model_learns(app_url, new_page, screenshot_dir):
    page = open_page(new_page, f"{app_url}/train?steps=400&seed=17")
    assert_no_exception(page, "opening the train page")
    traces = json.loads(chart_data(page))
    assert len(traces) == 2 * 1 and all(trace["type"] == "heatmap" for trace in traces)  # layers × heads

    page.get_by_role("button", name="Train", exact=True).click()
    page.wait_for_function(PROGRESS_JS, timeout=30_000)  # the fragment draws the progress bar
    wait_for_grid_changes(page)
    progress = page.evaluate(PROGRESS_JS)
    assert "Training: step" in progress or "Starting" in progress or "Waiting" in progress, progress
    assert_no_exception(page, "while training")
    full_page_screenshot(page, screenshot_dir / "train-live.png")

    # The curves gained points: more than step 0's single one.
    page.wait_for_function("""() => { const plot = document.querySelectorAll('.js-plotly-plot')[1];
        return plot && plot._fullData && plot._fullData.every((t) => t.x && t.x.length >= 2); }""", timeout=30_000)

    page.get_by_role("button", name="Stop", exact=True).click()
    page.wait_for_function("""() => { const b = Array.from(document.querySelectorAll('button'))
        .find((x) => x.innerText.trim().endsWith('Train')); return b && !b.disabled; }""", timeout=30_000)
    assert_no_exception(page, "after Stop")



def test_a_finished_runs_scrubber_stands_beside_the_buttons(app_url, new_page):
    """A finished run can be replayed: its scrubber, with its label beside it, stands in the buttons'
    row, so the grid under them — with the step's answer above — keeps its place on the first screen,
    letters included (at 1400 × 900, the desk's size)."""
    page = open_page(new_page, f"{app_url}/train?step=2")
    page.locator('.st-key-lesson_next button').filter(has_text="Reveal").click()  # it trains the step's run
    scrubber = page.get_by_role("slider", name="Replay the run: step")
    scrubber.wait_for(timeout=120_000)
    assert_no_exception(page, "after the run")
    train = page.get_by_role("button", name="Train", exact=True).bounding_box()
    row = scrubber.bounding_box()
    assert row["y"] <= train["y"] + train["height"] and train["y"] <= row["y"] + row["height"], \
        f"the scrubber ({row}) is not in the Train button's row ({train})"
    label = page.get_by_text("Replay the run, step:", exact=True).bounding_box()
    assert label["y"] <= train["y"] + train["height"] and train["y"] <= label["y"] + label["height"], \
        f"the scrubber's label ({label}) is not in the Train button's row ({train})"
    screen = page.viewport_size["height"]
    grid = page.locator(".js-plotly-plot").first
    assert grid.bounding_box()["y"] + grid.bounding_box()["height"] <= screen, "the grid ends below the first screen"
    letters = grid.evaluate("(plot) => Math.max(...Array.from(plot.querySelectorAll('.xtick text'), "
                            "(t) => t.getBoundingClientRect().bottom))")
    assert letters <= screen, f"the grid's letters end at {letters:.0f} px, below the first screen ({screen} px)"


def test_the_clickers_reveal_trains_the_step_and_next_moves_on_during_the_run(app_url, new_page, screenshot_dir):
    """A lecturer with a clicker (PageDown, presenting at 1280 × 720) on step 2: the first PageDown is
    Reveal, and it starts the step's run — the progress bar comes and the grid is redrawn with new
    weights, Train never clicked (it is disabled: the run is on).  The second PageDown moves on to
    step 3 during the run."""
    page = new_page()
    page.set_viewport_size(PROJECTOR)
    page.goto(f"{app_url}/train?present=1&step=2", wait_until="domcontentloaded")
    page.wait_for_selector('[data-testid="stApp"]')
    wait_until_settled(page, 0, "opening step 2")
    press_when_the_clicker_listens(page, "PageDown")
    page.wait_for_function(PROGRESS_JS, timeout=60_000)  # the run's progress bar: it started
    assert page.get_by_role("button", name="Train", exact=True).is_disabled(), "the run is on: Train is disabled"
    waiting = page.locator('[data-testid="stAlert"]').filter(has_text="appears here when the run has finished")
    assert waiting.count() == 1 and "Press" not in waiting.inner_text(), waiting.all_inner_texts()
    wait_for_grid_changes(page)
    assert_no_exception(page, "while the revealed step trains")
    page.screenshot(path=str(screenshot_dir / "train-clicker-step-2.png"))
    press_when_the_clicker_listens(page, "PageDown")  # Next, the run still going
    page.wait_for_url("**step=3*", timeout=30_000)
    page.locator('.st-key-lesson_next button').filter(has_text="Reveal").wait_for(timeout=30_000)
    assert_no_exception(page, "moving on during the run")
