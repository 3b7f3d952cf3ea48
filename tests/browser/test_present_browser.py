"""The classroom rules in a real browser (Chromium at a projector's 1280×720): in presentation mode
every lesson's first chart starts within the first 520 px and ends on the first screen (720 px), a
revealed step's answer (two lines at most, presenting) and its whole figure are on the screen (at a desk's
1400×900 too), its text at 4.5:1 contrast or more, and no chart text is under 16 px;
text from a link never renders as bold or a link; a task switch runs the trained model and its
address reopens the same view."""

from __future__ import annotations

import time
from urllib.parse import quote

import pytest

from explorer.kit.steps import load_steps, presented, step_heading
from explorer.lessons import LESSONS
from harness.claims import answer
from tests.browser.conftest import VIEWPORT, require_chromium
from tests.browser.test_browser import (
    assert_no_exception,
    assert_no_label_cut,
    assert_toolbar_clear,
    open_page,
    runs_done,
    wait_until_settled,
)
from tests.browser.test_contrast_browser import assert_contrast

PROJECTOR = {"width": 1280, "height": 720}
FOLD_PX = 520
MIN_FONT_PX = 16

LAYOUT_JS = """
() => {
  const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"], [data-testid="stVegaLiteChart"]')];
  const texts = [...document.querySelectorAll('.js-plotly-plot svg text, .vega-embed svg text')]
    .filter(t => t.textContent.trim() && t.getBoundingClientRect().width > 0);
  return {
    tops: charts.map(c => c.getBoundingClientRect().top),
    bottoms: charts.map(c => c.getBoundingClientRect().bottom),
    small: texts.filter(t => parseFloat(getComputedStyle(t).fontSize) < MIN_FONT_PX)
                .map(t => `${t.textContent.slice(0, 30)} (${getComputedStyle(t).fontSize})`),
    texts: texts.length,
    // each metric's label and value, as drawn: [label px, value px]
    metrics: [...document.querySelectorAll('[data-testid="stMetric"]')].map(m => [
      parseFloat(getComputedStyle(m.querySelector('[data-testid="stMetricLabel"]')).fontSize),
      parseFloat(getComputedStyle(m.querySelector('[data-testid="stMetricValue"] p')
                                  || m.querySelector('[data-testid="stMetricValue"]')).fontSize)]),
    // the metrics in the key figure's row (beside it), as [label, bottom px]
    beside: (() => {
      const key = [...charts].sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top)[0];
      const row = key && key.closest('[data-testid="stHorizontalBlock"]');
      return row ? [...row.querySelectorAll('[data-testid="stMetric"]')].map(m => [
        m.querySelector('[data-testid="stMetricLabel"]').innerText, m.getBoundingClientRect().bottom]) : [];
    })(),
  };
}
""".replace("MIN_FONT_PX", str(MIN_FONT_PX))


# A revealed step's answer, and the figure under it (a chart, or a table where the step is about one:
# search results), as the room sees them: their boxes on the screen, and the header's bottom.
REVEALED_JS = """(start) => {
  const answer = [...document.querySelectorAll('[data-testid="stAlert"]')]
    .find((a) => a.innerText.replace(/[*`]/g, "").includes(start));
  if (!answer) return null;
  const figure = [...document.querySelectorAll(
    '[data-testid="stPlotlyChart"], [data-testid="stVegaLiteChart"], '
    + '[data-testid="stDataFrame"], [data-testid="stTable"]')]
    .find((f) => answer.compareDocumentPosition(f) & Node.DOCUMENT_POSITION_FOLLOWING);
  const box = (e) => { const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom}; };
  const row = figure && figure.closest('[data-testid="stHorizontalBlock"]');
  const beside = row ? [...row.querySelectorAll('[data-testid="stMetric"]')].map((m) => [
    m.querySelector('[data-testid="stMetricLabel"]').innerText, m.getBoundingClientRect().bottom]) : [];
  // the answer's lines as drawn: the boxes of its text nodes (not of the elements around them, whose
  // boxes span lines), grouped by their middles half a line apart or more (bold sits a px or two off)
  const text = answer.querySelector('[data-testid="stMarkdownContainer"]');
  const half = parseFloat(getComputedStyle(text.querySelector('p') || text).lineHeight) / 2;
  const walker = document.createTreeWalker(text, NodeFilter.SHOW_TEXT), middles = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const range = document.createRange();
    range.selectNodeContents(node);
    for (const r of range.getClientRects()) if (r.height > 0 && r.width > 0) middles.push((r.top + r.bottom) / 2);
  }
  middles.sort((a, b) => a - b);
  const lines = middles.filter((m, i) => i === 0 || m - middles[i - 1] >= half).length;
  return {answer: box(answer), figure: figure ? box(figure) : null, beside, lines,
          header: document.querySelector('header[data-testid="stHeader"]').getBoundingClientRect().bottom,
          scrolled: document.querySelector('[data-testid="stMain"]').scrollTop};
}"""


# Vega charts draw after the run finishes: each has its SVG with marks in it.
VEGA_DRAWN_JS = """() => [...document.querySelectorAll('[data-testid="stVegaLiteChart"]')]
  .every((chart) => chart.querySelector('.vega-embed svg .mark-group, .vega-embed canvas'))"""


def vega_drawn(page) -> None:
    page.wait_for_function(VEGA_DRAWN_JS, timeout=10_000, polling=100)


CLICKER_READY_JS = """() => window.__explorerClicker === true
  && document.querySelector('.st-key-lesson_next button') !== null"""


def press_when_the_clicker_listens(page, key: str) -> None:
    """Press `key` once the page's clicker handler is installed and the step bar is drawn (both arrive
    with the page's first run; a key pressed before that is the browser's, as on any page)."""
    page.wait_for_function(CLICKER_READY_JS, timeout=10_000, polling=100)
    page.keyboard.press(key)


def wait_for_address(page, wanted, what: str, timeout_s: float = 30.0) -> None:
    """Wait (bounded) until the page's address satisfies `wanted`, then until the page is quiet.  The
    address is what the server wrote in the run the key started: its proof that the run happened.  The
    run counter alone can miss a short run (its start and end drawn as one: seen in CI, the step open
    and the test waiting 30 s for a run it had not counted)."""
    deadline = time.monotonic() + timeout_s
    while not wanted(page.url):
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: the address did not change within {timeout_s:.0f} s: {page.url}", pytrace=False)
        page.wait_for_timeout(100)
    wait_until_settled(page, runs_done(page) - 1, what)  # the run is done (above); now quiet


# Every drawn table whose columns run past its box: a data grid scrolls sideways inside it, a plain
# table's cells stand past its right edge.  On a projector nobody scrolls a table sideways, so a
# column past the edge is a column the room does not see (the encoders' search scores, the decoder's
# shares of parameters were).
TABLES_CUT_JS = """() => [...document.querySelectorAll('[data-testid="stDataFrame"], [data-testid="stTable"]')]
  .filter((t) => t.getBoundingClientRect().height > 0).flatMap((t) => {
    const box = t.getBoundingClientRect(), grid = t.querySelector('.dvn-scroller');
    const cut = grid ? grid.scrollWidth > grid.clientWidth + 1
      : [...t.querySelectorAll('td, th')].some((c) => c.getBoundingClientRect().right > box.right + 1);
    return cut ? [t.innerText.slice(0, 60).replace(/\\s+/g, ' ')] : [];
  })"""


def assert_no_table_cut(page, when: str) -> None:
    cut = page.evaluate(TABLES_CUT_JS)
    assert not cut, f"{when}: tables wider than their box on {page.url} (columns out of sight): {cut}"


@pytest.fixture
def projector_page(new_page):
    def open_at(url: str, size: dict = PROJECTOR):
        page = new_page()
        page.set_viewport_size(size)
        page.goto(url, wait_until="domcontentloaded")
        page.wait_for_selector('[data-testid="stApp"]')
        wait_until_settled(page, 0, f"loading {url}")
        return page
    return open_at


def assert_a_readable_chart_on_the_first_screen(page, lesson, screenshot_dir) -> None:
    """Presentation mode, as the lesson opens (before its steps): the key figure whole on the projected
    screen, its text large, metrics beside it on the screen, the sidebar folded away.  (Checked at the start
    of the projector's walk through the lesson, on the page the walk goes on with: a test of its own opened
    every lesson once more.)"""
    assert_no_exception(page, "presentation mode")
    vega_drawn(page)
    layout = page.evaluate(LAYOUT_JS)
    page.screenshot(path=str(screenshot_dir / f"present-{lesson.url_path}.png"))
    assert layout["tops"], "the page draws a chart"
    first = layout["tops"].index(min(layout["tops"]))
    assert layout["tops"][first] <= FOLD_PX, f"first chart starts at {layout['tops'][first]:.0f} px"
    assert layout["bottoms"][first] <= PROJECTOR["height"], (
        f"the first chart ends at {layout['bottoms'][first]:.0f} px, below the projected screen's "
        f"{PROJECTOR['height']} px: part of the key figure is out of the room's sight")
    assert_no_table_cut(page, "presentation mode")
    assert layout["texts"] > 5, "chart text was found to measure"
    assert not layout["small"], f"chart text under {MIN_FONT_PX} px: {layout['small'][:10]}"
    # A metric's number is what the room reads from the back: larger than its label, as at a desk
    # (presenting once drew it at the body text's size, under a label almost as large).
    small_values = [(label, value) for label, value in layout["metrics"] if value < 1.5 * label]
    assert not small_values, f"metric values not larger than their labels ([label px, value px]): {small_values}"
    # The numbers beside the key figure are read with it (gradients' orders of magnitude): all on the
    # first screen (the fourth once stood below it, under a five-line heading).
    cut = [(label, round(bottom)) for label, bottom in layout["beside"] if bottom > PROJECTOR["height"]]
    assert not cut, f"metrics beside the key figure end below the projected screen ([label, bottom px]): {cut}"
    title = page.locator('[data-testid="stMain"] h1').bounding_box()
    assert title["x"] < 200, f"the sidebar starts folded away (the title starts at x = {title['x']:.0f})"



# Where a lesson's steps are walked: a projector, presenting, driven by the clicker's PageDown; and a
# student's desk, by clicking the step bar's Reveal and Next buttons.
WALKS = {"projector": (PROJECTOR, "present=1&"), "desk": (VIEWPORT, "")}


def wait_until_fitted(page, state: str) -> None:
    """Until the page's fit (explorer/kit/present.py FIT_JS) has handled `state` ("|step|answer")."""
    try:
        page.wait_for_function("(state) => (window.__explorerFitted || '').endsWith(state)",
                               arg=state, timeout=10_000, polling=100)
    except Exception:
        pytest.fail(f"the page never fitted {state!r} (last: {page.evaluate('window.__explorerFitted')!r}): "
                    f"is FIT_JS on the page? {page.url}", pytrace=False)


def press_next(page, screen: str) -> None:
    if screen == "projector":
        press_when_the_clicker_listens(page, "PageDown")
    else:
        page.locator('.st-key-lesson_next button').click()


@pytest.mark.parametrize("screen", WALKS)
@pytest.mark.parametrize("lesson", LESSONS, ids=[p.url_path for p in LESSONS])
def test_every_step_revealed_has_its_answer_and_whole_figure_on_the_first_screen(lesson, screen, projector_page,
                                                                                 app_url, screenshot_dir):
    """A lecturer goes through a whole lesson with the clicker alone on a projector, and a student at a
    desk with the Next button.  On the projector the lesson opens presenting, its key figure checked on the
    first screen (`assert_a_readable_chart_on_the_first_screen`), and the first press opens step 1.  From
    step 1 each press reveals the step; its answer and the whole figure
    it talks about (the step's section is drawn first) are on the screen, the page scrolled up just as
    far as the figure needed (the answer still under the header; further half-hid a heading above
    it); the next press opens the next step, back at the page's top.  (At the desk, most steps' figures
    ended below the 900 px screen under their answer.)"""
    require_chromium()
    size, query = WALKS[screen]
    steps = load_steps(lesson.url_path)
    if screen == "projector":  # as a lecturer does: the lesson opened presenting, then the clicker's first press
        page = projector_page(f"{app_url}/{lesson.url_path}?present=1", size)
        assert_a_readable_chart_on_the_first_screen(page, lesson, screenshot_dir)
        press_next(page, screen)
        page.wait_for_url("**step=1*", timeout=30_000)
        page.locator('.st-key-lesson_next button').filter(has_text="Reveal").wait_for(timeout=30_000)
        wait_until_settled(page, 0, "going on to step 1")
        wait_until_fitted(page, "|1|question")
    else:
        page = projector_page(f"{app_url}/{lesson.url_path}?{query}step=1", size)
    for number in range(1, len(steps) + 1):
        assert f"step={number}" in page.url, page.url
        assert_contrast(page, f"step {number}'s question")
        said = answer(lesson.url_path, steps[number - 1])
        if screen == "projector":  # presenting, the step bar shows the answer's first sentences (kit/steps.py)
            said = presented(step_heading(number, len(steps), steps[number - 1].title), said)[0]
        start = said.replace("*", "").replace("`", "")[:30]
        press_next(page, screen)
        # The answer appearing is the sign the Reveal's run happened (a run of a view computed by the
        # warm-up can be shorter than a frame, too short for the run counter to see); then the
        # sections put off to a follow-up run arrive and the page settles.
        page.locator('[data-testid="stAlert"]').filter(has_text=start).first.wait_for(timeout=30_000)
        wait_until_settled(page, 0, f"revealing step {number}")
        assert_no_exception(page, f"revealing step {number}")
        vega_drawn(page)
        assert_no_label_cut(page, f"step {number}")
        assert_toolbar_clear(page, f"step {number}")
        assert_no_table_cut(page, f"step {number}")
        assert_contrast(page, f"step {number}")
        wait_until_fitted(page, f"|{number}|answer")
        shown = page.evaluate(REVEALED_JS, start)
        page.screenshot(path=str(screenshot_dir / f"{screen}-reveal-{lesson.url_path}-{number}.png"))
        assert shown and shown["figure"], f"step {number}: an answer with a figure under it"
        said, figure = shown["answer"], shown["figure"]
        assert shown["header"] - 1 <= said["top"] and said["bottom"] <= size["height"], \
            f"step {number}: the answer is at {said['top']:.0f}–{said['bottom']:.0f} px"
        assert figure["bottom"] <= size["height"], (
            f"step {number}: the step's figure ends at {figure['bottom']:.0f} px, below the "
            f"{size['height']} px screen (it starts at {figure['top']:.0f} px, the answer at {said['top']:.0f} px)")
        cut = [(label, round(bottom)) for label, bottom in shown["beside"] if bottom > size["height"]]
        assert not cut, f"step {number}: metrics beside the figure end below the screen ([label, bottom px]): {cut}"
        # Read at a glance from the back of the room: two lines, the rest behind "More" (kit/steps.py fold)
        assert screen != "projector" or shown["lines"] <= 2, f"step {number}: the answer takes {shown['lines']} lines"
        assert not shown["scrolled"] or figure["bottom"] >= size["height"] - 12, \
            f"step {number}: scrolled {shown['scrolled']:.0f} px, further than the figure needed (ends at " \
            f"{figure['bottom']:.0f} px)"
        if number < len(steps):
            press_next(page, screen)
            page.wait_for_url(f"**step={number + 1}*", timeout=30_000)
            # The next step asks its question with a Reveal button (its run, of views the warm-up
            # computed, may be too short for the run counter to see).
            page.locator('.st-key-lesson_next button').filter(has_text="Reveal").wait_for(timeout=30_000)
            wait_until_settled(page, 0, f"going on to step {number + 1}")
            wait_until_fitted(page, f"|{number + 1}|question")
            top = page.evaluate('document.querySelector(\'[data-testid="stMain"]\').scrollTop')
            assert top == 0, f"step {number + 1}'s question: the page is scrolled {top} px down"


def test_text_from_a_link_never_renders_as_bold_or_a_link(new_page, app_url):
    require_chromium()
    hostile = "`**Session expired.** [Sign in](//e.vil)`"
    page = open_page(new_page, f"{app_url}/lookup?{quote(hostile)}=1")
    note = page.locator('[data-testid="stAlert"]').filter(has_text="Session expired")
    assert note.count() == 1, "the unknown setting is reported"
    assert note.locator("a").count() == 0, "no link inside the note"
    assert note.locator("strong").filter(has_text="Session").count() == 0, "no bold from the link"
    assert note.locator("code").filter(has_text="Session").count() == 0, "not broken out of a code span either"


def test_a_task_switch_runs_the_trained_model_and_its_address_reopens_the_view(new_page, app_url):
    require_chromium()
    page = open_page(new_page, f"{app_url}/attention?heads=8")
    assert any("random weights" in t for t in page.locator('[data-testid="stCaptionContainer"]').all_inner_texts())
    before = runs_done(page)
    page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first.click()
    page.get_by_role("option", name="induction").click()
    wait_until_settled(page, before, "switching the task")
    running = next(t for t in page.locator('[data-testid="stCaptionContainer"]').all_inner_texts()
                   if t.startswith("Running"))
    assert "trained model induction-sinusoidal-h2-l2" in running.replace("`", "")
    address = page.url
    assert "task=induction" in address and "heads=" not in address, address
    again = open_page(new_page, address)
    assert running in again.locator('[data-testid="stCaptionContainer"]').all_inner_texts()


def test_the_clicker_drives_the_lesson_whatever_has_the_focus(projector_page, app_url):
    """The lecturer just moved a slider (it has the focus); the clicker's PageDown still goes to the next
    step instead of moving the slider, and its PageUp comes back.  Without presentation mode the
    slider keeps its keys."""
    require_chromium()
    page = projector_page(f"{app_url}/depth?present=1")
    slider = page.locator('[data-testid="stSlider"] input[type="range"]').first  # in the folded sidebar
    slider.focus()
    press_when_the_clicker_listens(page, "PageDown")
    wait_for_address(page, lambda url: "step=1" in url, "pressing PageDown")
    assert "step=1" in page.url and "layers=2" in page.url, page.url  # step 1 sets two layers
    slider.focus()
    press_when_the_clicker_listens(page, "PageUp")
    wait_for_address(page, lambda url: "step=" not in url, "going back")
    assert "step=" not in page.url, page.url

    desk = projector_page(f"{app_url}/depth")
    slider = desk.locator('[data-testid="stSlider"] input[type="range"]').first
    slider.focus()
    before = runs_done(desk)
    desk.keyboard.press("PageDown")
    wait_until_settled(desk, before, "PageDown on a slider, not presenting")
    assert "step=" not in desk.url and "layers=" in desk.url, desk.url


def test_the_arrows_are_the_focused_widgets_and_the_pages_otherwise(projector_page, app_url):
    """Presenting, → on a focused slider moves the slider (the lesson stays on its step, the slider's
    value changes); with no control focused, → and ← are Next and Back, as a clicker's keys."""
    require_chromium()
    page = projector_page(f"{app_url}/depth?present=1&layers=6")
    slider = page.locator('[data-testid="stSlider"] input[type="range"]').first
    slider.focus()
    before = runs_done(page)
    page.keyboard.press("ArrowRight")
    wait_until_settled(page, before, "ArrowRight on the focused slider")
    wait_for_address(page, lambda url: "layers=7" in url, "the slider moving (6 → 7)")
    assert "step=" not in page.url, page.url

    page.evaluate("document.activeElement && document.activeElement.blur()")
    press_when_the_clicker_listens(page, "ArrowRight")
    wait_for_address(page, lambda url: "step=1" in url, "ArrowRight with nothing focused")
    page.evaluate("document.activeElement && document.activeElement.blur()")
    press_when_the_clicker_listens(page, "ArrowLeft")
    wait_for_address(page, lambda url: "step=" not in url, "ArrowLeft with nothing focused")


def test_presentation_mode_stays_on_when_the_sidebar_opens_another_lesson(projector_page, app_url):
    """A lecturer presenting lookup opens cost from the sidebar: cost opens presenting too (the
    address says present=1 and the toggle is on), and its step bar answers the clicker."""
    require_chromium()
    page = projector_page(f"{app_url}/lookup?present=1")
    page.locator('[data-testid="stExpandSidebarButton"]').click()  # presenting folds the sidebar away
    before = runs_done(page)
    page.locator('[data-testid="stSidebarNav"] a[href$="/cost"]').first.click()
    wait_until_settled(page, before, "opening cost from the sidebar")
    page.wait_for_url("**/cost?*present=1*", timeout=10_000)
    toggle = page.locator('[data-testid="stSidebar"] [data-testid="stCheckbox"]').filter(
        has_text="Presentation mode").locator("input")
    assert toggle.is_checked(), "the toggle on the new lesson is on"
    assert page.locator('[data-testid="stMain"] h1').inner_text().strip() == \
        next(p.title for p in LESSONS if p.url_path == "cost")



SIDEBAR_FOLDED_JS = """() => { const s = document.querySelector('[data-testid="stSidebar"]');
  const r = s && s.getBoundingClientRect(); return !r || r.right <= 1 || r.width < 50; }"""


@pytest.mark.parametrize("start, link", [("", "lookup"), ("lookup", "attention")], ids=["home", "next lesson"])
def test_a_page_link_opens_the_lesson_presenting_with_the_sidebar_folded(start, link, projector_page, app_url):
    """Presenting, the lecturer opens a lesson from a link on the page (a lesson on Home, or "Next
    lesson" at a lesson's foot): the link drops `present` from the address, yet the lesson opens
    presenting, its sidebar folded away (it covered the figure's left third)."""
    require_chromium()
    page = projector_page(f"{app_url}/{start}?present=1")
    page.wait_for_function(SIDEBAR_FOLDED_JS, timeout=10_000)
    title = next(p.title for p in LESSONS if p.url_path == link)
    before = runs_done(page)
    page.locator(f'[data-testid="stMain"] a[href$="{link}"]').last.click()
    wait_until_settled(page, before, f"opening {link} from a link on the page")
    assert page.locator('[data-testid="stMain"] h1').inner_text().strip() == title
    page.wait_for_timeout(600)  # a sidebar that opens slides in
    assert page.evaluate(SIDEBAR_FOLDED_JS), f"{link} opened with the sidebar over the page"
    toggle = page.locator('[data-testid="stSidebar"] [data-testid="stCheckbox"]').filter(
        has_text="Presentation mode").locator("input")
    assert toggle.is_checked(), "the lesson opened presenting"

WIDTHS_JS = """() => {
  const box = (s) => { const e = document.querySelector(s); return e ? e.getBoundingClientRect().width : null; };
  return {main: box('[data-testid="stMainBlockContainer"]'), chart: box('[data-testid="stPlotlyChart"]'),
          back: box('.st-key-lesson_back button'), sidebar: box('[data-testid="stSidebar"]')};
}"""


@pytest.mark.parametrize("lesson", ["attention", "real", "length"])
def test_an_opened_sidebar_lies_over_the_presented_page(lesson, projector_page, app_url):
    """Presenting, the lecturer opens the sidebar (to move a control, or to open another lesson): it
    lies over the page, which keeps its width, so the figures laid out for the projector's width keep
    their labels apart and the step bar its buttons whole."""
    require_chromium()
    page = projector_page(f"{app_url}/{lesson}?present=1")
    vega_drawn(page)
    before = page.evaluate(WIDTHS_JS)
    page.locator('[data-testid="stExpandSidebarButton"]').click()
    page.wait_for_function("""() => { const s = document.querySelector('[data-testid="stSidebar"]');
        const r = s && s.getBoundingClientRect(); return r && r.left >= 0 && r.width > 200; }""", timeout=10_000)
    page.wait_for_timeout(600)  # the sidebar's slide
    after = page.evaluate(WIDTHS_JS)
    assert after["sidebar"] > 200, "the sidebar is open"
    for part in ("main", "chart", "back"):
        assert abs(after[part] - before[part]) <= 1, \
            f"{part}: {before[part]:.0f} px wide, {after[part]:.0f} px with the sidebar open"
    page.locator('[data-testid="stSidebarNav"] a[href$="/cost"]').first.click(trial=True)  # clickable, on top
