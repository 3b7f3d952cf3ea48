"""Each lesson opens as itself, in a real browser: a lesson opened through the sidebar after two
controls of the lesson before it were moved shows what a fresh visit shows — the same address and the
same text — at a desk's 1400×900 and at a projector's 1280×720.  (tests/pages/test_lesson_scope.py
checks the same through app.py's navigation in AppTest, every control compared.)"""

from __future__ import annotations

import re
import time
from urllib.parse import urlsplit

import pytest

from explorer.ui.catalog import LESSONS
from tests.browser.conftest import require_chromium
from tests.browser.test_browser import (
    assert_no_exception,
    nudge_slider,
    open_page,
    run_started,
    runs_done,
    wait_until_settled,
)

SIZES = {"desk": {"width": 1400, "height": 900}, "projector": {"width": 1280, "height": 720}}
# What may differ between two visits of the same view: measured durations (a stopwatch, a load time).
_DURATION = re.compile(r"\d[\d.,]*\s*(?:ms|µs|s)\b")


def seen(page) -> tuple[str, str]:
    """(the address's query, the main area's text with durations blanked) once the page is settled:
    the sections put off to their own run have arrived and the text no longer changes (bounded)."""
    main = page.locator('[data-testid="stMain"]')
    text, deadline = None, time.monotonic() + 20
    while time.monotonic() < deadline:
        page.wait_for_timeout(500)
        now = main.inner_text()
        if now == text and "Drawing this section" not in now:
            break
        text = now
    return urlsplit(page.url).query, _DURATION.sub("#", text)


CASES = [(lesson, size) for lesson in LESSONS for size in SIZES]


@pytest.mark.parametrize(("lesson", "size"), CASES, ids=[f"{p.url_path}-{s}" for p, s in CASES])
def test_a_lesson_opened_from_the_sidebar_is_a_fresh_visit(lesson, size, new_page, app_url):
    require_chromium()
    previous = LESSONS[LESSONS.index(lesson) - 1]  # the lesson before it (the last one for the first)
    page = open_page(new_page, f"{app_url}/{previous.url_path}")
    page.set_viewport_size(SIZES[size])
    moved = 0
    sliders = page.locator('[data-testid="stSlider"]').count()
    for index in range(sliders):
        if moved == 2:
            break
        before = runs_done(page)
        if nudge_slider(page, index) and run_started(page, before):  # the value moved and the page reran
            wait_until_settled(page, before, f"moving slider {index} of {previous.url_path}")
            moved += 1
    assert moved >= min(2, sliders) and moved, f"{previous.url_path}: controls to move"
    assert urlsplit(page.url).query, "the moved controls are in the address"
    page.locator(f'[data-testid="stSidebarNav"] a[href$="/{lesson.url_path}"]').first.click()
    # The address changes at once; then the lesson's own title, and the page settles.
    page.wait_for_url(re.compile(rf"/{lesson.url_path}(\?|$)"), timeout=30_000)
    page.locator('[data-testid="stMain"] h1').filter(has_text=lesson.title).wait_for(timeout=30_000)
    wait_until_settled(page, 0, f"opening {lesson.url_path} from the sidebar")
    assert_no_exception(page, f"{lesson.url_path} opened from {previous.url_path}")
    opened = seen(page)

    fresh = open_page(new_page, f"{app_url}/{lesson.url_path}")
    fresh.set_viewport_size(SIZES[size])
    visit = seen(fresh)
    assert opened[0] == visit[0], "the address is the lesson's own"
    assert opened[1] == visit[1], "the page reads as a fresh visit"
