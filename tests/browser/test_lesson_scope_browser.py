"""Each lesson opens as itself, in a real browser (issue #29): a lecturer moves two controls of one
lesson, opens the next through the sidebar, and sees what a fresh visit to it shows — the same
address, the same text, the same controls and the same chart data — at a desk's 1400×900 and at a
projector's 1280×720 with ?present=1.

Here every lesson is opened once, the sizes taking turns down the sidebar: at the desk from the
lesson before it, on the projector from the lesson after it (every lesson at both sizes took twice
the time, a sixth of the whole suite, for checks that do not depend on the size: the text, the
controls and the data).  tests/pages/test_lesson_scope.py opens every lesson from every other one
through app.py's navigation in AppTest, every control compared; tests/browser/test_present_browser.py
opens every lesson on the projector too.
"""

from __future__ import annotations

import difflib
import re
from urllib.parse import parse_qsl, urlsplit

import pytest

from explorer.kit.controls import UrlControls
from explorer.lessons import LESSONS
from explorer.serve.later import PLACEHOLDER
from tests.browser.conftest import _log_tail, require_chromium
from tests.browser.test_browser import (
    IDLE_TIMEOUT_MS,
    QUIET_MS,
    SETTLED_JS,
    assert_no_exception,
    assert_no_label_cut,
    assert_toolbar_clear,
)

N = len(LESSONS)
SIZES = {"desk": ({"width": 1400, "height": 900}, "", -1),  # (viewport, query, opened from lesson i + k)
         "projector": ({"width": 1280, "height": 720}, "present=1", +1)}
CASES = [(list(SIZES)[i % 2], i) for i in range(N)]
_DURATION = re.compile(r"\d[\d.,]*\s*(?:ms|µs|s)\b")  # what two visits may differ in: measured durations
_WAITING = PLACEHOLDER.split(" ", 1)[1]  # a put-off section's text until its own run draws it

# Complete: Streamlit's run is over and the page quiet (SETTLED_JS), the lesson's title is shown and
# no section is still on its way.
COMPLETE_JS = SETTLED_JS.replace("({after, quietMs}) => {", """({after, quietMs, title, waiting}) => {
  const main = document.querySelector('[data-testid="stMain"]');
  const h1 = main && main.querySelector('h1');
  if (!h1 || !h1.textContent.includes(title)) return false;
  if (main.textContent.includes(waiting)) return false;""")

# What the page shows: the main area's text outside the charts, every Plotly chart's traces, the
# number of Vega charts, and every keyed control's value (sidebar and page).
SEEN_JS = """
(skip) => {
  const main = document.querySelector('[data-testid="stMain"]');
  const charts = '.js-plotly-plot, [data-testid="stVegaLiteChart"], '
    + '[data-testid="stDataFrame"], [data-testid="stTable"]';
  const parts = [];
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) => node.parentElement.closest(charts) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
  while (walker.nextNode()) { const t = walker.currentNode.textContent.trim(); if (t) parts.push(t); }
  const plain = (v) => v == null ? null : ArrayBuffer.isView(v) ? Array.from(v)
    : Array.isArray(v) ? v.map(plain) : v;
  const plots = [...main.querySelectorAll('.js-plotly-plot')].map((plot) =>
    JSON.stringify((plot.data || []).map((t) => ({type: t.type, x: plain(t.x), y: plain(t.y), z: plain(t.z)}))));
  const controls = [...document.querySelectorAll('[data-testid="stElementContainer"][class*="st-key-"]')]
    .map((box) => [/(?:^|\\s)st-key-(\\S+)/.exec(box.className)[1], box])
    .filter(([key, box]) => !key.startsWith('_') && !skip.includes(key)
      && box.querySelector('input, textarea'))
    .map(([key, box]) => {
      const values = [...box.querySelectorAll('input, textarea')].map((i) =>
        [i.type || '', i.value ?? '', i.checked ?? ''].join('|'));
      const shown = box.querySelector('[data-testid="stSelectbox"]')?.textContent ?? '';
      return `${key}: ${values.join(' ; ')} ${shown}`;
    });
  return {text: parts.join('\\n'), plots, vega: main.querySelectorAll('[data-testid="stVegaLiteChart"]').length,
          controls};
}
"""

# The lesson's sliders, toggles and segmented controls a test can move by keyboard or one click
# (no drop-down lists): their keys, in page order, enabled and not app-wide.
MOVABLE_JS = """
(skip) => [...document.querySelectorAll('[data-testid="stElementContainer"][class*="st-key-"]')].flatMap((box) => {
  const key = /(?:^|\\s)st-key-(\\S+)/.exec(box.className)[1];
  if (key.startsWith('_') || skip.includes(key)) return [];
  if (box.querySelector('[aria-disabled="true"], input:disabled, button:disabled')) return [];
  const rect = box.getBoundingClientRect();
  if (rect.width === 0 || rect.height === 0) return [];
  if (box.querySelector('[data-testid="stSlider"] input[type="range"]')) return [[key, 'slider']];
  if (box.querySelector('[data-testid="stCheckbox"] input')) return [[key, 'toggle']];
  if (box.querySelector('[data-testid="stButtonGroup"] button')) return [[key, 'segments']];
  return [];
})
"""
APP_WIDE = [*UrlControls.SESSION_WIDE, "lesson_next", "lesson_back", "step"]


def complete(page, title: str, what: str) -> None:
    try:
        page.wait_for_function(COMPLETE_JS, arg={"after": 0, "quietMs": QUIET_MS, "title": title,
                                                 "waiting": _WAITING}, timeout=IDLE_TIMEOUT_MS, polling=100)
    except Exception as error:
        pytest.fail(f"{what}: the page did not complete within {IDLE_TIMEOUT_MS / 1000:.0f} s: {error}\n"
                    f"Last lines of the server log:\n{_log_tail(15)}", pytrace=False)
    assert_no_exception(page, what)


def query(url: str) -> list[tuple[str, str]]:
    return sorted(parse_qsl(urlsplit(url).query, keep_blank_values=True))


def _seen_now(page) -> dict:
    shown = page.evaluate(SEEN_JS, APP_WIDE)
    shown["text"] = _DURATION.sub("…", shown["text"])
    shown["query"] = query(page.url)
    return shown


def seen(page, what: str) -> dict:
    """What the page shows once two looks a second apart agree (a loaded machine can leave a gap
    longer than the quiet time between a section's heading and its paragraphs), at most 15 looks."""
    last = _seen_now(page)
    for _ in range(15):
        page.wait_for_timeout(1_000)
        now = _seen_now(page)
        if now == last:
            return now
        last = now
    pytest.fail(f"{what}: the page kept changing for 15 s", pytrace=False)


def move(page, key: str, kind: str, presenting: bool) -> bool:
    """Move one control by one notch (a slider: an arrow key; a toggle or a segmented control: a click).  False if the
    control is gone (an earlier move hid it)."""
    box = page.locator(f'.st-key-{key}').first
    if kind == "slider":
        thumb = box.locator('input[type="range"]')
        if thumb.count() == 0:
            return False
        at = thumb.first.evaluate("(i) => (Number(i.value) - Number(i.min)) / ((Number(i.max) - Number(i.min)) || 1)")
        thumb.first.focus()
        if presenting:  # the left and right arrows drive the lesson then; up and down still move a slider
            page.keyboard.press("ArrowDown" if at >= 1 else "ArrowUp")
        else:
            page.keyboard.press("ArrowLeft" if at >= 1 else "ArrowRight")
    elif kind == "toggle":
        label = box.locator('[data-testid="stCheckbox"] label')
        if label.count() == 0:
            return False
        label.first.click()
    else:
        button = box.locator('button[data-testid="stBaseButton-segmented_control"]')  # not the chosen one
        if button.count() == 0:
            return False
        button.first.click()
    return True


def move_two_controls(page, title: str, presenting: bool) -> list[str]:
    """Move two of the lesson's controls, each to a value that changes the address (every lesson
    control is in the link), both still moved at the end; return their keys."""
    moved = []
    for key, kind in page.evaluate(MOVABLE_JS, APP_WIDE):
        if len(moved) == 2:
            break
        before = page.url
        if not move(page, key, kind, presenting):
            continue
        try:
            page.wait_for_function("(before) => location.href !== before", arg=before, timeout=5_000)
        except Exception:  # this control's move did not reach the address (say, one value only): the next
            continue
        complete(page, title, f"moving {key}")
        # a control that others follow (a task) puts them back to their defaults: count what is still moved
        moved = [k for k in moved if f"{k}=" in page.url] + [key]
    return moved


@pytest.mark.parametrize(("size", "index"), CASES, ids=[f"{s}-{LESSONS[i].url_path}" for s, i in CASES])
def test_a_lesson_opened_from_the_sidebar_after_two_controls_moved_equals_a_fresh_visit(size, index, new_page,
                                                                                       app_url):
    require_chromium()
    viewport, extra, offset = SIZES[size]
    lesson, source = LESSONS[index], LESSONS[(index + offset) % N]
    suffix = f"?{extra}" if extra else ""

    _switch_and_compare(new_page(), new_page, app_url, viewport, suffix, lesson, source)  # new_page forgets the sidebar


def _switch_and_compare(page, new_page, app_url, viewport, suffix, lesson, source) -> None:
    page.set_viewport_size(viewport)
    page.goto(f"{app_url}/{source.url_path}{suffix}", wait_until="domcontentloaded")
    complete(page, source.title, f"opening {source.url_path}")
    if page.locator('[data-testid="stExpandSidebarButton"]').is_visible():
        page.locator('[data-testid="stExpandSidebarButton"]').click()  # presenting folds the sidebar away
    moved = move_two_controls(page, source.title, presenting=bool(suffix))
    assert len(moved) == 2, f"{source.url_path}: only {moved} could be moved"
    assert all(f"{key}=" in page.url for key in moved), page.url

    page.locator(f'[data-testid="stSidebarNav"] a[href$="/{lesson.url_path}"]').first.click()
    page.wait_for_url(f"**/{lesson.url_path}*", timeout=10_000)
    complete(page, lesson.title, f"opening {lesson.url_path} from {source.url_path}")
    switched = seen(page, f"{lesson.url_path} opened from {source.url_path}")

    fresh_page = new_page()
    fresh_page.set_viewport_size(viewport)
    fresh_page.goto(f"{app_url}/{lesson.url_path}{suffix}", wait_until="domcontentloaded")
    complete(fresh_page, lesson.title, f"a fresh visit to {lesson.url_path}")
    fresh = seen(fresh_page, f"a fresh visit to {lesson.url_path}")
    assert_no_label_cut(fresh_page, f"a fresh visit to {lesson.url_path}")
    assert_toolbar_clear(fresh_page, f"a fresh visit to {lesson.url_path}")

    assert switched["query"] == fresh["query"], "the address"
    assert switched["controls"] == fresh["controls"], "the controls"
    assert switched["text"] == fresh["text"], "the text differs:\n" + "\n".join(
        difflib.unified_diff(fresh["text"].splitlines(), switched["text"].splitlines(), "fresh", "switched", n=1))
    assert switched["vega"] == fresh["vega"], "the number of Vega charts"
    assert switched["plots"] == fresh["plots"], "the charts' data"
