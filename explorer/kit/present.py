"""Presentation mode (`?present=1`): a page a lecturer can project.

The sidebar starts collapsed (app.py reads the link before the page is configured) and, opened, lies
over the page instead of narrowing it (the figures keep the width they are laid out for), body text is
larger, the page's padding and title are compact so the lesson's key figure is on the first screen,
and every figure's text is raised to at least 18 px (explorer.figures.presentation).  The mode is a
URL-bound toggle like every other control, so a projected view is a link too.

On every page, presenting or not: the phone layout, and a revealed step's figure scrolled whole onto the
screen under its answer (FIT_JS).
"""

from __future__ import annotations

import streamlit as st

from .first_chart import chart_sent
from .links import Choice, Flag, Unusable, read
from .steps import QUESTION_ICON

__all__ = [
    "IMAGE_FORMATS", "IMAGE_KEY", "PRESENT_KEY", "PRESENT_RULE", "image_format", "plotly_chart",
    "present_setting", "present_toggle", "presenting", "presenting_at_start", "presenting_from_link", "style_page",
    "write_present_link",
]

PRESENT_KEY = "present"
PRESENT_RULE = Flag(true=("1", "true"), false=("0", "false"))  # what a link may say for `present`

_CSS = """
<style>
html { font-size: 20px; }
header[data-testid="stHeader"] { height: 2.4rem !important; min-height: 2.4rem !important; }
.block-container, [data-testid="stMainBlockContainer"] { padding-top: 2.6rem !important;
  padding-bottom: 1rem !important; max-width: 100% !important; }
h1 { font-size: 1.6rem !important; padding: 0 0 0.45rem 0 !important; }
h2, h3 { font-size: 1.25rem !important; padding: 0.2rem 0 0.45rem 0 !important; }
[data-testid="stMarkdownContainer"] p, [data-testid="stMarkdownContainer"] li { font-size: 1rem; }
/* A metric's value is a paragraph too: it keeps its metric's large size, not the body text's; set
   close, so a column of metrics beside a figure stays on the screen with it. */
[data-testid="stMetricValue"], [data-testid="stMetricValue"] [data-testid="stMarkdownContainer"] p {
  line-height: 1.1; }
[data-testid="stMetricValue"] [data-testid="stMarkdownContainer"] p { font-size: inherit; }
[data-testid="stCaptionContainer"] { font-size: 0.85rem !important; color: #31333f !important; }
[data-testid="stVerticalBlock"] { gap: 0.55rem !important; }
[data-testid="stAlert"] [role="alert"], [data-testid="stAlertContainer"] { padding: 0.45rem 0.8rem !important; }
section[data-testid="stSidebar"] { position: fixed !important; top: 0; bottom: 0; left: 0; z-index: 999991;
  box-shadow: 0 0 1.2rem rgba(0, 0, 0, 0.25); }
</style>
"""


_TOGGLE = "_present_toggle"  # the toggle's session-state key; the URL's `present` is written by hand
# The session's mode, kept as plain session state: Streamlit drops a widget's state when another page
# runs, and the address loses `present` when the sidebar opens another page — yet the mode is the whole
# app's (a lecturer clicking to the next lesson stays in it).
_MODE = "_present_mode"


def presenting_from_link() -> bool:
    """Whether the link asks for presentation mode (readable before any widget exists): `present=1`
    or `present=true`, once; anything else is the default, off (the page's note says why)."""
    if PRESENT_KEY not in st.query_params:
        return False
    try:
        return read(st.query_params.get_all(PRESENT_KEY), PRESENT_RULE)
    except Unusable:
        return False


def presenting_at_start() -> bool:
    """The mode before the toggle exists in this run: what the link says, if it says anything, else
    the session's mode (another page of the app opened from the sidebar or a page link, which drop
    the address's `present`), else off.  app.py folds the sidebar away by it."""
    if PRESENT_KEY in st.query_params:
        return presenting_from_link()
    return bool(st.session_state.get(_MODE, False))


def on_phone() -> bool:
    """Whether this session's browser says it is a phone: "Mobi" in its User-Agent (how browsers mark a
    phone, tablets excepted; a desk browser's narrow window still gets the sideways-scrolling box)."""
    try:
        agent = st.context.headers.get("User-Agent") or ""
    except Exception:  # no request (a test's script run): a desk
        return False
    return "Mobi" in agent


def presenting() -> bool:
    """Whether this run is in presentation mode: the toggle's value once it exists, else `presenting_at_start`."""
    value = st.session_state.get(_TOGGLE)
    return presenting_at_start() if value is None else bool(value)


def write_present_link() -> None:
    """Put the toggle's state in the address: `present=1`, or no `present` at all."""
    if st.session_state.get(_TOGGLE):
        st.query_params[PRESENT_KEY] = "1"
    else:
        st.query_params.pop(PRESENT_KEY, None)


def present_toggle(where=st) -> bool:
    """The presentation-mode toggle, kept in the link as `present=1` (a bound toggle would want
    `present=true`; `1` is what people type)."""
    if _TOGGLE not in st.session_state:
        st.session_state[_TOGGLE] = presenting_at_start()
    shown = where.toggle("Presentation mode", key=_TOGGLE, on_change=write_present_link,
                         help="For projecting: larger text and figures, the sidebar folded away, the lead "
                              "folded. The setting is in the link (present=1), like every other.")
    st.session_state[_MODE] = shown
    if shown and PRESENT_KEY not in st.query_params:  # a page opened from the sidebar: the address says so too
        st.query_params[PRESENT_KEY] = "1"
    return shown


IMAGE_KEY, IMAGE_FORMATS = "image", ("png", "svg")


def image_format() -> str:
    """The format of the charts' camera button: the sidebar's choice (in the link as `image=svg`)."""
    chosen = st.session_state.get(IMAGE_KEY)
    if chosen is None and IMAGE_KEY in st.query_params:  # before the choice is made (a staged opening): the link's
        try:
            chosen = read(st.query_params.get_all(IMAGE_KEY), Choice(IMAGE_FORMATS))
        except Unusable:
            chosen = None
    return chosen if chosen in IMAGE_FORMATS else IMAGE_FORMATS[0]


# A clicker sends PageDown/PageUp.  Streamlit's button shortcuts do not fire while a slider or another
# widget has the focus (the slider takes PageDown itself), so while presenting the page captures those
# keys before any widget sees them and presses the lesson's Next or Back button.  The left and right
# arrows do the same only when no control that moves with arrows has the focus (a slider, a text box,
# a radio group, a select box): an arrow on a focused slider moves that slider, as everywhere else.
CLICKER_JS = """
<span id="explorer-presenting" hidden></span>
<script>
(() => {
  if (window.__explorerClicker) return;
  window.__explorerClicker = true;
  const buttons = {PageDown: "lesson_next", ArrowRight: "lesson_next",
                   PageUp: "lesson_back", ArrowLeft: "lesson_back"};
  const arrowed = '[role="slider"], [role="radiogroup"], [role="radio"], [role="combobox"], '
    + '[role="listbox"], [role="option"], [role="tab"], [role="spinbutton"]';
  const ownsArrows = (target) => !!target && target !== document.body && target !== document.documentElement
    && (target.isContentEditable || ["TEXTAREA", "SELECT"].includes(target.tagName) || !!target.closest(arrowed)
        || (target.tagName === "INPUT" && !["checkbox", "button", "submit", "reset"].includes(target.type)));
  window.addEventListener("keydown", (event) => {
    const name = buttons[event.key];
    const presenting = document.getElementById("explorer-presenting");
    if (!name || !presenting || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key.startsWith("Arrow") && ownsArrows(event.target)) return;
    const button = document.querySelector(`.st-key-${name} button`);
    if (!button) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    if (!button.disabled) button.click();
  }, true);
})();
</script>
"""

# The answer of a step just revealed stands above the step's figure and pushes its bottom off the
# screen (a projector's 720 px, and a desk's 900 px too for most steps).  So, once the figure under the
# answer is drawn, if it ends past the screen the page scrolls until it ends on the screen, at most until
# the answer stands just under Streamlit's header (the title and step bar above it go up; the clicker's
# keys still drive the steps; scrolling the answer to the header every time half-hid a section heading
# above it); a step's question (the figures hidden) brings the page back to the top.  At every width,
# presenting or not.  Each step's answer or question is handled once, when it appears: the reader's own
# scrolling is left alone.  `window.__explorerFitted` names the last one handled ("path|step|answer"),
# for the tests.
FIT_JS = """
<script>
(() => {
  if (window.__explorerFit) return;
  window.__explorerFit = true;
  const FIGURES = '[data-testid="stPlotlyChart"], [data-testid="stVegaLiteChart"], '
    + '[data-testid="stDataFrame"], [data-testid="stTable"]';
  const DRAWN = '.main-svg, canvas, svg.marks';  // a table has its height as soon as it is mounted
  let handled = "", waiting = 0;
  const stepAlert = (main) => {
    for (const alert of main.querySelectorAll('[data-testid="stAlert"]')) {
      const text = alert.querySelector('[data-testid="stMarkdownContainer"]');
      const found = text && /^Step (\\d+) of \\d+/.exec(text.innerText.trim());
      if (found) return [alert, found[1]];
    }
    return [null, ""];
  };
  // Waits until the run is over, the figure drawn and its place unchanged for STILL frames (what the
  // run sends above it comes in pieces), at most 5 s.
  const STILL = 10;
  const fit = (main, alert, state, started, last, still) => {
    const figure = [...main.querySelectorAll(FIGURES)].find((f) =>
      alert.compareDocumentPosition(f) & Node.DOCUMENT_POSITION_FOLLOWING);
    const drawn = figure && figure.getBoundingClientRect().height > 0
      && (["stDataFrame", "stTable"].includes(figure.getAttribute("data-testid")) || figure.querySelector(DRAWN));
    const app = document.querySelector('[data-testid="stApp"]');
    const running = !app || app.getAttribute("data-test-script-state") !== "notRunning";
    const bottom = drawn ? figure.getBoundingClientRect().bottom : null;
    still = drawn && !running && bottom === last ? still + 1 : 0;
    if (still < STILL && performance.now() - started < 5000) {
      waiting = requestAnimationFrame(() => fit(main, alert, state, started, bottom, still));
      return;
    }
    if (figure) {
      const header = document.querySelector('header[data-testid="stHeader"]');
      const lacking = figure.getBoundingClientRect().bottom - (window.innerHeight - 8);
      const room = alert.getBoundingClientRect().top - (header ? header.getBoundingClientRect().bottom : 0) - 8;
      if (lacking > 0 && room > 0) main.scrollTop += Math.min(lacking, room);  // no further: what is above stays
    }
    window.__explorerFitted = state;
  };
  const look = () => {
    const main = document.querySelector('[data-testid="stMain"]');
    if (!main) return;
    const [alert, step] = stepAlert(main);
    if (!alert) return;
    const icon = alert.querySelector('[data-testid="stAlertDynamicIcon"]');
    const answer = !(icon && icon.textContent.trim() === "QUESTION_ICON");
    const state = `${location.pathname}|${step}|${answer ? "answer" : "question"}`;
    if (state === handled) return;
    handled = state;
    cancelAnimationFrame(waiting);
    if (answer) fit(main, alert, state, performance.now(), null, 0);
    else { main.scrollTop = 0; window.__explorerFitted = state; }
  };
  let queued = false;
  new MutationObserver(() => {
    if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; look(); }); }
  }).observe(document.body, {subtree: true, childList: true, characterData: true});
})();
</script>
""".replace("QUESTION_ICON", QUESTION_ICON)


# Every page: half of Streamlit's 6rem band above the title, so more of the key figure is on the first
# screen (the title still clears the header's menu).  On a phone (~390 px): the step bar wraps onto more
# lines instead of running off the screen, and a chart keeps a width its panels' titles and tick labels
# fit in (the figures thin their labels for the desk's and projector's widths), scrolling sideways
# (wider than 600 px where a figure's panel titles need it: `plotly_chart`); the chart toolbar's
# full-screen button shows it at the phone's whole size.
_PHONE_CSS = """
<style>
[data-testid="stMainBlockContainer"] { padding-top: 3rem; }
/* A button's key (PageDown on Next) in the button's own colour: Streamlit fades it to 60 %, 2.8:1 on the
   red of Next, under WCAG AA's 4.5:1 (tests/browser/test_contrast_browser.py). */
[data-has-shortcut] kbd { opacity: 1; }
/* Captions (how to read a figure, its source) a grey at 7:1 on white, not Streamlit's 60 % (3.9:1); code too. */
[data-testid="stCaptionContainer"] { opacity: 1; }
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] code { color: #5c5955; }
/* The page's scripts (this block's and the clicker's) take no place in the page's column of elements. */
[data-testid="stElementContainer"]:has(> [data-testid="stHtml"] > script) { display: none; }
@media (max-width: 640px) {
  [data-testid="stButtonGroup"], [data-testid="stButtonGroup"] > div { flex-wrap: wrap !important;
    max-width: 100% !important; }
  [data-testid="stElementContainer"]:has([data-testid="stPlotlyChart"]) { overflow-x: auto; overflow-y: hidden; }
  PHONE_BOX
}
@media (max-width: 640px), (pointer: coarse) {
  /* A finger on a chart scrolls the page, or a wide chart's own box sideways: Plotly's drag layer
     took every touch (a swipe zoomed the chart, and the page did not move). */
  [data-testid="stPlotlyChart"] .draglayer .drag { pointer-events: none !important; }
}
</style>
"""
_PHONE_BOX = '[data-testid="stFullScreenFrame"]:has(> [data-testid="stPlotlyChart"]) { min-width: 600px; }'
PHONE_CHART_PX = 600  # a phone's chart is at least this wide (the rule above); wider where its panel titles need it
_PHONE_WIDER = ("<style>@media (max-width: 640px) {{ .st-key-{key} [data-testid=\"stFullScreenFrame\"] "
                "{{ min-width: {px}px !important; }} }}</style>")


def style_page() -> None:
    """The phone layout and the fit of a revealed step's figure, and the presentation stylesheet and
    the clicker's keys when presenting (call once per run, early)."""
    box = "" if on_phone() else _PHONE_BOX  # a phone's charts are laid out for its width (plotly_chart)
    st.html(_PHONE_CSS.replace("PHONE_BOX", box) + FIT_JS, unsafe_allow_javascript=True)
    if presenting():
        st.html(_CSS + CLICKER_JS, unsafe_allow_javascript=True)


def present_setting(controls, where=st.sidebar) -> bool:
    """The presentation-mode toggle as a setting of the page `controls` (a UrlControls) reports on:
    a link's `present=1` turns it on, an unusable value is named in the page's note and leaves the
    address (lesson pages get the same from explorer.serve.page)."""
    shown = present_toggle(where)
    controls.link_value(PRESENT_KEY, PRESENT_RULE)
    if controls.rejected(PRESENT_KEY):
        write_present_link()
    return controls.record(PRESENT_KEY, "Presentation mode", shown, PRESENT_RULE)


# Plotly's own mode-bar buttons for the figures drawn here (cartesian): all go but the camera.
PLOTLY_BUTTONS_REMOVED = ("zoom2d", "pan2d", "select2d", "lasso2d", "zoomIn2d", "zoomOut2d", "autoScale2d",
                          "resetScale2d", "toggleSpikelines", "hoverClosestCartesian", "hoverCompareCartesian",
                          "toggleHover", "resetViews")


def plotly_chart(figure, *, where=st, key: str | None = None, phone_fits: bool = False, phone_layout: bool = True,
                 **kwargs) -> None:
    """st.plotly_chart, with every font raised to the presentation minimum when presenting.  The
    figure is sent without Plotly's validation (the builders are validated by the unit tests).

    The chart's toolbar is always shown (not only on hover) and holds two buttons: Streamlit's full
    screen (the chart alone on the whole screen, for a projector or a phone) and the camera: a PNG at
    twice the screen's resolution, or an SVG (the sidebar's "Download charts as"), made in the browser
    at no cost to the server, in one visible click.  Dragging still zooms, a double click resets; the
    two buttons sit in the corner above the colour bar, clear of the panel titles.  (Plotly's
    `modeBarButtons` would drop the full-screen button, which Streamlit adds to the mode bar: the other
    buttons are removed by name instead.)  `phone_fits`: a figure drawn for a narrow column (a list of
    tokens) takes a phone's width instead of scrolling sideways in a 600 px box (needs a `key`).  On a
    phone (`on_phone`) every figure is laid out again for its width (explorer/figures/phone.py), but a
    drawing whose parts stand at fixed places (`phone_layout=False`: a diagram) keeps its 600 px box."""
    if presenting():
        import plotly.graph_objects as go

        from ..figures.ink import inked
        from ..figures.presentation import enlarge_plotly

        spec = figure if isinstance(figure, dict) else figure.to_plotly_json()
        figure = go.Figure(inked(enlarge_plotly(spec)), _validate=False)
    elif on_phone() and not phone_layout:
        if key:
            where.html(_PHONE_WIDER.format(key=key, px=PHONE_CHART_PX))
    elif on_phone():
        import plotly.graph_objects as go

        from ..figures.phone import fit_phone

        spec = figure if isinstance(figure, dict) else figure.to_plotly_json()
        figure = go.Figure(fit_phone(spec), _validate=False)
    else:
        wider = getattr(figure, "phone_width", 0)  # a FrozenFigure's (explorer/figures/margins.py)
        if key and (wider > PHONE_CHART_PX or phone_fits):
            where.html(_PHONE_WIDER.format(key=key, px=0 if phone_fits else wider))
    kwargs.setdefault("width", "stretch")
    kwargs.setdefault("config", {"displayModeBar": True, "displaylogo": False,
                                 "modeBarButtonsToRemove": list(PLOTLY_BUTTONS_REMOVED),
                                 "toImageButtonOptions": {"format": image_format(), "scale": 2,
                                                          "filename": key or "figure"}})
    where.plotly_chart(figure, key=key, **kwargs)
    chart_sent()
