"""Hostile input: arbitrary strings in every URL parameter and every text box of every page.

Every page of explorer.serve.catalog.PAGES is run through AppTest, via app.py's navigation.  Its
parameters are discovered, not listed: a bound widget's key is its URL parameter, so the page is
run once at its defaults and then with every select box and radio at its last option (which
reveals widgets that only appear for some choices, such as "your own text…" boxes), collecting
every keyed widget and the link that made it appear.  Hypothesis then sends links with arbitrary
values for those parameters and for unknown ones, and types arbitrary text into the text boxes.
Whatever arrives:

* the page raises nothing;
* a page that drew charts at its defaults still draws charts;
* every widget holds an allowed value;
* every link value the widget could not take, and every parameter the page does not have, is
  named in the page's note (on pages that have settings), in a note of bounded size.

Example counts are small and fixed (derandomize=True) so the suite is reproducible and quick on
two cores; they are split over the pages, so adding pages does not make the suite slower.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.kit.text import escape_markdown, quoted
from explorer.serve.catalog import PAGES
from harness.apptest import ROOT, info_text, page_test

CHOICE_KINDS = ("selectbox", "radio")
TEXT_KINDS = ("text_area", "text_input")
WIDGET_KINDS = ("slider", "select_slider", *CHOICE_KINDS, "toggle", "checkbox", *TEXT_KINDS, "number_input",
                "multiselect")
DEFAULT_PAGE = next((p.path for p in PAGES if not p.url_path), "")
RESERVED = {"embed", "embed_options"}  # Streamlit's own parameters: never shown to the page
DISCOVERY_ROUNDS = 4
LINK_EXAMPLES_TOTAL = 36  # URL examples over all pages (at least MIN_PER_PAGE each)
MIN_PER_PAGE = 3
TYPED_EXAMPLES_PER_BOX = 2
TYPED_BOXES_PER_PAGE = 2
MAX_NOTE_LINE = 400  # characters: a note names what was wrong, it does not echo a whole hostile value

INTERESTING = [
    "", " ", "0", "-0", "1e309", "-1e309", "nan", "NaN", "inf", "-inf", "1e-320", "9" * 400, "0x10", "1_000",
    "true", "True", "FALSE", "yes", "None", "null", "[]", "{}", "[1, 2]", "1,2", "1;2", "1 2", "\x00", "\n",
    "\t\r\n", "%00", "%25", "&x=1", "?", "#", "<script>alert(1)</script>", "`code`", "**bold**", "$x^2$",
    ":material/home:", "‮reversed", "🙂" * 50, "A B C", "a" * 5000, "é" * 700, "１２", "٣", "½",
]

# Values: arbitrary unicode, a few known troublemakers, long repeated strings.
values = st.one_of(
    st.text(max_size=30),
    st.sampled_from(INTERESTING),
    st.builds(lambda s, n: s * n, st.text(min_size=1, max_size=4), st.integers(50, 1500)),
)
_key_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), min_size=1, max_size=40)
unknown_keys = st.one_of(_key_text, st.builds(lambda s, n: s * n, _key_text, st.integers(20, 200))).filter(
    lambda k: k.strip() and k.lower() not in RESERVED)


@dataclass
class Param:
    key: str
    kind: str
    label: str
    options: list[str]  # what a link may say (choices), empty for free input
    context: dict[str, str]  # the link under which the widget appeared


@dataclass
class PageParams:
    path: str
    params: dict[str, Param] = field(default_factory=dict)
    has_charts: bool = False


def keyed_widgets(at) -> dict[str, tuple[str, object]]:
    """key -> (kind, widget) for every widget with a key in the last run, except session-only ones
    (keys starting with "_", such as the presentation toggle, which the link carries as `present`)."""
    found = {}
    for kind in WIDGET_KINDS:
        for widget in getattr(at, kind):
            if widget.key and not widget.key.startswith("_"):
                found[widget.key] = (kind, widget)
    return found


def link_text(kind: str, value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value == int(value):
        return str(int(value))
    return str(value)


def options_of(kind: str, widget) -> list[str]:
    if kind in (*CHOICE_KINDS, "select_slider"):
        return [str(o) for o in widget.options]
    if kind in ("toggle", "checkbox"):
        return ["true", "false"]
    if kind == "slider":
        return [link_text(kind, widget.min), link_text(kind, widget.max)]
    return []


def chart_count(at) -> int:
    return sum(len(at.get(kind)) for kind in ("plotly_chart", "vega_lite_chart", "arrow_vega_lite_chart"))


def run(path: str, link: dict):
    """Run a page the way the app does: through app.py's navigation (st.page_link needs it)."""
    at = page_test("app.py", link)
    if path != DEFAULT_PAGE:
        at.switch_page(str(ROOT / path))
    return at.run()


@functools.cache
def discover(path: str) -> PageParams:
    """Run the page at its defaults, then repeatedly with every choice at its last option."""
    found = PageParams(path)
    link: dict[str, str] = {}
    for round_ in range(DISCOVERY_ROUNDS):
        at = run(path, link)
        assert not at.exception, (path, link, [e.value for e in at.exception])
        if round_ == 0:
            found.has_charts = chart_count(at) > 0
        new = False
        for key, (kind, widget) in keyed_widgets(at).items():
            if key not in found.params:
                new = True
                found.params[key] = Param(key, kind, widget.proto.label, options_of(kind, widget), dict(link))
        for key, (kind, widget) in keyed_widgets(at).items():
            if kind in CHOICE_KINDS and widget.options and link.get(key) != str(widget.options[-1]):
                link[key] = str(widget.options[-1])
                new = True
        if not new:
            break
    return found


def _same_value(raw: list[str], value) -> bool:
    """Does the link text `raw` describe the value the widget ended up with?  (Leniently: a widget
    that shows what the link plainly meant needs no note; the app's own rules are stricter.)"""
    if not raw:
        return False
    text = raw[-1].strip()
    if isinstance(value, bool):
        return text.lower() == str(value).lower()
    if isinstance(value, (int, float)):
        try:
            return math.isclose(float(text), float(value), rel_tol=1e-9, abs_tol=1e-12)
        except ValueError:
            return False
    return raw[-1] == str(value)


def _raw(value) -> list[str]:
    return value if isinstance(value, list) else [value]


def check_view(at, link: dict, page: PageParams, typed: dict[str, str] | None = None) -> None:
    """The invariants of any view, whatever the link and typing were."""
    assert not at.exception, f"{page.path} with {link!r}: {[e.value for e in at.exception]}"
    if page.has_charts:
        assert chart_count(at) > 0, f"{page.path} with {link!r} drew no chart"
    widgets = keyed_widgets(at)
    for key, (kind, widget) in widgets.items():
        if kind == "slider":
            low, high = widget.min, widget.max
            for v in widget.value if isinstance(widget.value, (list, tuple)) else [widget.value]:
                assert low <= v <= high, f"{key}={v} outside [{low}, {high}]"
        elif kind in (*CHOICE_KINDS, "select_slider"):
            shown = widget.format_func(widget.value) if getattr(widget, "format_func", None) else widget.value
            assert str(shown) in [str(o) for o in widget.options], f"{key}={widget.value!r} not an option"
        elif kind in TEXT_KINDS and widget.proto.max_chars:
            assert len(widget.value) <= widget.proto.max_chars, f"{key}: longer than max_chars"
    notes = info_text(at)
    for line in notes.splitlines():
        assert len(line) <= MAX_NOTE_LINE, f"{page.path}: note line of {len(line)} characters: {line[:200]!r}…"
    if not page.params:
        return  # a page without settings has no note to show
    for key, value in link.items():
        if key in (typed or {}):
            continue
        if key not in widgets:
            assert quoted(key) in notes, f"{page.path}: unknown parameter {key!r} not named in the note:\n{notes}"
            continue
        kind, widget = widgets[key]
        shown = widget.format_func(widget.value) if getattr(widget, "format_func", None) else widget.value
        if not _same_value(_raw(value), widget.value) and str(shown) != value:  # used as its label reads
            label = widget.proto.label
            assert f"**{escape_markdown(label)}**" in notes, (
                f"{page.path}: {key}={value!r} was not used (widget shows {widget.value!r}) but the note does not "
                f"name {label!r}:\n{notes}")


def _examples_per_page() -> int:
    return max(MIN_PER_PAGE, LINK_EXAMPLES_TOTAL // max(1, len(PAGES)))


def hostile_links(page: PageParams):
    """A link: some of the page's parameters (with the link that makes each appear) set to arbitrary
    values or to allowed ones, plus sometimes unknown parameters."""
    keys = sorted(page.params)

    @st.composite
    def build(draw):
        link: dict[str, object] = {}
        chosen = draw(st.lists(st.sampled_from(keys), max_size=4, unique=True)) if keys else []
        for key in chosen:
            link.update(page.params[key].context)
        for key in chosen:
            param = page.params[key]
            pick = [values]
            if param.options:
                pick.append(st.sampled_from(param.options))
            value = draw(st.one_of(*pick))
            if draw(st.integers(0, 9)) == 0:  # the same key repeated in the link
                value = [value, draw(values)]
            link[key] = value
        for key in draw(st.lists(unknown_keys, max_size=2, unique=True)):
            if key not in page.params:
                link[key] = draw(values)
        return link

    return build()


@pytest.mark.parametrize("info", PAGES, ids=lambda p: p.url_path or "home")
def test_arbitrary_links_never_break_a_page(info):
    page = discover(info.path)

    @settings(max_examples=_examples_per_page(), deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(link=hostile_links(page))
    def check(link):
        at = run(info.path, link)
        check_view(at, link, page)

    check()


def _text_boxes(page: PageParams) -> list[Param]:
    return [p for p in page.params.values() if p.kind in TEXT_KINDS][:TYPED_BOXES_PER_PAGE]


def _typing_check(info, page: PageParams, box: Param):
    @settings(max_examples=TYPED_EXAMPLES_PER_BOX, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(text=values)
    def check(text):
        at = run(info.path, box.context)
        check_view(at, box.context, page)
        # set_value, not input(): AppTest's input() silently drops text over max_chars, so the server's
        # own cut (what a browser that ignored the limit would meet) would never be exercised.
        keyed_widgets(at)[box.key][1].set_value(text).run()
        # A later run of the session: a lesson page (UrlControls with its page name) reads the link on
        # its first run only, so now just the parameters its widgets hold are judged against the link.
        still = {key: value for key, value in box.context.items() if key in keyed_widgets(at)}
        check_view(at, still, page, typed={box.key: text})
        typed = keyed_widgets(at)[box.key][1]
        limit = typed.proto.max_chars
        assert typed.value == (text[:limit] if limit else text)

    return check


@pytest.mark.parametrize("info", PAGES, ids=lambda p: p.url_path or "home")
def test_arbitrary_typing_in_every_text_box(info):
    """Typed text goes through the widget (max_chars is enforced by the server), not the link."""
    page = discover(info.path)
    for box in _text_boxes(page):
        _typing_check(info, page, box)()


@pytest.mark.parametrize("info", PAGES, ids=lambda p: p.url_path or "home")
def test_every_parameter_at_once_long_and_repeated(info):
    """The worst link Hypothesis found, made deterministic: every parameter given twice, the second
    time 2000 characters long, plus a 500-character unknown parameter."""
    page = discover(info.path)
    link: dict[str, object] = {}
    for param in page.params.values():
        link.update(param.context)
    for param in page.params.values():
        link[param.key] = ["", "9" * 2000]
    link["x" * 500] = "1"
    check_view(run(info.path, link), link, page)


def test_every_page_with_settings_has_parameters_to_attack():
    """Discovery found every page's controls (guards against the tests above silently doing nothing)."""
    for info in PAGES:
        page = discover(info.path)
        if info.url_path:  # lessons have settings; the home page has none
            assert page.params, f"{info.path}: no URL-bound widget found"
