"""Text a projector does not wash out: every word on a lesson's page, and every word of its charts
that stands on the page's white (tick labels, axis titles, legends, colour bars, titles), drawn at
WCAG AA's 4.5:1 contrast or more, measured in Chromium from the colours as drawn (opacity included,
over the backgrounds under the text).  Streamlit's chart themes drew chart text in #808495 (3.7:1),
its chosen step number in its red on a tinted pill (4.48:1) and a button's key (PageDown) at 60 %
(2.8:1 on red).  `assert_contrast` runs where the pages are already open: on every lesson explored at a
desk (tests/browser/test_browser.py, test_page), and on every step of every lesson, its question and its
revealed answer, presenting and at a desk (tests/browser/test_present_browser.py).  (A test of its own
opened every lesson twice more for it: 4 minutes of the suite.)

What is measured against what it stands on: a chart's words on the page's white (a word inside a
chart's plot, on a coloured cell, picks its own colour against that cell: explorer/figures/heads.py),
a page's text on the backgrounds of the boxes around it that contain it (an alert's tint, a button's
red; a slider's value stands above its thumb, outside the thumb's box, on the page).  A disabled
button (Back on the first step) is exempt, as WCAG exempts inactive controls.  Streamlit's captions
were 3.9:1 (explorer/kit/present.py raises them to 7:1)."""

from __future__ import annotations

from tests.browser.conftest import require_chromium
from tests.browser.test_browser import open_page

AA = 4.5  # WCAG 2.1 AA, normal text

CONTRAST_JS = """
() => {
  const parse = (c) => { const m = (c || '').match(/[\\d.]+/g);
    return m ? [...m.slice(0, 3).map(Number), m.length > 3 ? Number(m[3]) : 1] : null; };
  const channel = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  const luminance = ([r, g, b]) => 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
  const ratio = (a, b) => { const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05); };
  const opacity = (e) => { let a = 1;
    for (let x = e; x && x.nodeType === 1; x = x.parentElement) a *= parseFloat(getComputedStyle(x).opacity);
    return a; };
  const name = (e) => { const key = e.closest('[class*="st-key-"]');
    return key ? key.className.match(/st-key-[^ ]+/)[0] : (e.closest('[data-testid]')?.dataset.testid || '?'); };
  // The background under an element: the page's white, then every box around it that contains its
  // middle, in order, each over the one before.
  const under = (e) => {
    const r = e.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
    const boxes = []; for (let b = e; b; b = b.parentElement) boxes.unshift(b);
    let colour = [255, 255, 255];
    for (const b of boxes) {
      const c = parse(getComputedStyle(b).backgroundColor), box = b.getBoundingClientRect();
      if (!c || c[3] === 0 || x < box.left || x > box.right || y < box.top || y > box.bottom) continue;
      colour = colour.map((v, i) => c[i] * c[3] + v * (1 - c[3]));
    }
    return colour;
  };
  const drawn = (c, alpha, bg) => c.slice(0, 3).map((v, i) => v * c[3] * alpha + bg[i] * (1 - c[3] * alpha));
  const low = []; let measured = 0;
  const CHART_WORDS = ['.xtick text', '.ytick text', '.g-xtitle text', '.g-ytitle text', '.legendtext', '.gtitle',
    '.cbaxis text', '.cbtitle text'].map((s) => '.js-plotly-plot ' + s).concat(
    ['.role-axis-label text', '.role-axis-title text', '.role-legend-label text', '.role-legend-title text',
     '.role-title text'].map((s) => '.vega-embed ' + s));
  for (const t of document.querySelectorAll(CHART_WORDS.join(','))) {
    if (!t.textContent.trim() || t.getBoundingClientRect().width === 0) continue;
    const style = getComputedStyle(t), alpha = opacity(t) * parseFloat(style.fillOpacity);
    const fill = parse(style.fill);
    if (alpha === 0 || !fill) continue;  // a label Plotly hides for want of room
    measured++;
    const shown = ratio(drawn(fill, alpha, [255, 255, 255]), [255, 255, 255]);
    if (shown < AA) low.push(`${name(t)} chart: ${t.textContent.trim().slice(0, 24)} ${shown.toFixed(2)}:1`);
  }
  const main = document.querySelector('[data-testid="stMain"]');
  const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT), seen = new Set();
  while (walker.nextNode()) {
    const e = walker.currentNode.parentElement;
    // A disabled control is exempt (WCAG 1.4.3: "inactive user interface components").
    if (!walker.currentNode.textContent.trim() || seen.has(e) || e.closest('svg, canvas, button:disabled')) continue;
    seen.add(e);
    const r = e.getBoundingClientRect(), style = getComputedStyle(e), alpha = opacity(e);
    if (r.width === 0 || r.height === 0 || style.visibility === 'hidden' || alpha === 0) continue;
    measured++;
    const bg = under(e), shown = ratio(drawn(parse(style.color), alpha, bg), bg);
    if (shown < AA) low.push(`${name(e)} ${e.tagName}: ${e.textContent.trim().slice(0, 30)} ${shown.toFixed(2)}:1`);
  }
  return {measured, low};
}
""".replace("AA", str(AA))


def assert_contrast(page, when: str) -> None:
    """Every word measured (see the module) at 4.5:1 or more."""
    found = page.evaluate(CONTRAST_JS)
    assert found["measured"] > 10, f"{when}: text was found to measure ({found['measured']})"
    assert not found["low"], f"{when}: text under {AA}:1 contrast on {page.url}: {found['low'][:8]}"


def test_the_measure_tells_grey_from_ink(new_page, app_url):
    """The measure itself: Streamlit's chart grey (#808495) fails, in a chart's tick label and in the
    page's text; the ink passes; the ink at 30 % opacity fails."""
    require_chromium()
    page = open_page(new_page, f"{app_url}/attention")
    page.wait_for_selector(".js-plotly-plot .ytick text", timeout=20_000)
    page.evaluate("""() => {
      const main = document.querySelector('[data-testid="stMain"]');
      for (const [word, css] of [['probe-grey', 'color: #808495'], ['probe-ink', 'color: #1a1a1a'],
                                 ['probe-faded', 'color: #1a1a1a; opacity: 0.3']]) {
        const p = document.createElement('p'); p.textContent = word; p.setAttribute('style', css); main.appendChild(p);
      }
      const tick = document.querySelector('.js-plotly-plot .xtick text, .js-plotly-plot .ytick text');
      tick.textContent = 'tick-grey'; tick.style.fill = '#808495';
    }""")
    low = " ".join(page.evaluate(CONTRAST_JS)["low"])
    assert "probe-grey" in low and "tick-grey" in low and "probe-faded" in low, low
    assert "probe-ink" not in low, low
