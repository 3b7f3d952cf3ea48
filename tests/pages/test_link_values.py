"""Every URL parameter of every lesson, opened with every kind of hostile value ("The class arrives").

A class pastes links from a chat, a mail client cuts them, someone tries to break the app.  Whatever a
link gives a parameter — empty, junk, a huge number, NaN, infinity, a negative number, digits of
another script, the parameter twice (`?T=5&T=7`), 10 kB — the page raises nothing, the control shows
its default, and a note names the control.  A text box is the one exception: any text it can hold
(one value, at most its max_chars) is the user's text and is kept as it is; the page says itself
what it could not read.

The parameters are discovered, never listed: every widget bound to the URL (its proto carries the
`query_param_key`, the lesson step included) and every parameter the page's UrlControls publishes
(explorer.kit.controls.PARAMETERS_KEY, such as `present`, which is no bound widget), under the link
that makes each appear (`url_parameters`: each option of each choice, then unions of those links).

Run time on two cores: the parameters that appear under the same link share their runs.  Run j sets
parameter i to kind (i + j) mod K, so K runs give every parameter every kind; within a kind, the
sample rotates with the parameter (so every sample is used on some parameter).  Text boxes, which
keep what they can hold and so may change the page, get runs of their own.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import pytest

from explorer.kit.controls import PARAMETERS_KEY
from explorer.kit.text import escape_markdown
from explorer.lessons import LESSONS
from harness.apptest import info_text
from tests.pages.test_hostile_input import CHOICE_KINDS, link_text, run

TEXT_KINDS = ("text_area", "text_input")
LONG = 10 * 1024  # characters: "very long"

# Hostile kinds -> samples; a sample is one link value.  "negative" and "repeated" (a list: the
# parameter given twice, each value usable alone) are made for the widget by `sample`.
KINDS: dict[str, tuple] = {
    "empty": ("",),
    "junk": ("junk", "<script>alert(1)</script>", "**bold** `code` $x$", "%00", "0x10", "1_0", " 1"),
    "huge": ("9" * 400, "1e309", "99999999999999999999"),
    "nan": ("nan", "NaN", "-nan"),
    "inf": ("inf", "-inf", "Infinity"),
    "negative": ("-1",),
    "unicode": ("１２", "٣", "½", "🙂", "é", "‮2"),
    "repeated": ("first, then the default", "the default, then another"),
    "long": ("7" * LONG, "é" * (LONG // 2)),
}


@dataclass(frozen=True)
class Param:
    key: str
    label: str
    kind: str  # the widget's element type, "" for a parameter with no bound widget (present)
    options: tuple[str, ...]  # values a link may give it (link text), when the widget says so
    low: float | None  # a numeric slider's minimum
    max_chars: int  # a text box's limit, else 0
    context: tuple[tuple[str, str], ...]  # the link under which it appears
    published: bool  # made through UrlControls, which publishes it (so its link value is judged there)

    @property
    def text(self) -> bool:
        return self.kind in TEXT_KINDS


def elements(node):
    """Every element of an AppTest tree (main and sidebar), depth first."""
    for child in getattr(node, "children", {}).values():
        yield child
        yield from elements(child)


def bound_widgets(at) -> dict[str, object]:
    """query_param_key -> widget, for every widget bound to the URL in the last run."""
    found = {}
    for root in (at.main, at.sidebar):
        for element in elements(root):
            key = getattr(getattr(element, "proto", None), "query_param_key", "")
            if key:
                found[key] = element
    return found


def published(at) -> dict[str, tuple]:
    """key -> (label, value, …) of every parameter the page's UrlControls recorded (new code only)."""
    return dict(at.session_state[PARAMETERS_KEY]) if PARAMETERS_KEY in at.session_state else {}


def options_of(widget) -> tuple[str, ...]:
    if widget.type in (*CHOICE_KINDS, "select_slider", "button_group"):
        labels = getattr(widget.proto, "options", [])
        return tuple(getattr(o, "content", o) for o in labels)
    if widget.type == "toggle" or widget.type == "checkbox":
        return ("true", "false")
    if widget.type == "slider":
        return (link_text("slider", widget.proto.min), link_text("slider", widget.proto.max))
    return ()


def describe(key: str, widget, at, context: dict) -> Param:
    link, recorded = tuple(sorted(context.items())), key in published(at)
    if widget is None:
        return Param(key, published(at)[key][0], "", (), None, 0, link, recorded)
    low = widget.proto.min if widget.type == "slider" and not widget.proto.options else None
    max_chars = widget.proto.max_chars if widget.type in TEXT_KINDS else 0
    return Param(key, widget.proto.label, widget.type, options_of(widget), low, max_chars, link, recorded)


def _unions(contexts) -> list[dict[str, str]]:
    """Every union of two links that do not disagree on a parameter."""
    contexts = [dict(c) for c in sorted(set(contexts))]
    return [{**a, **b} for i, a in enumerate(contexts) for b in contexts[i + 1:]
            if all(a[k] == b[k] for k in a.keys() & b.keys())]


@functools.cache
def url_parameters(path: str) -> dict[str, Param]:
    """Every URL parameter of a page, with the link under which it appears: the page at its
    defaults, then with each option of each choice (select box, radio) in turn, under the link that
    made that choice appear; then under the union of any two links that each revealed parameters (a
    `pad_sort` needs both `task=sort` and `mask=padding`), until no run shows a new parameter."""
    found: dict[str, Param] = {}
    queue: list[dict[str, str]] = [{}]
    seen: set[tuple] = set()
    while queue:
        link = queue.pop(0)
        if tuple(sorted(link.items())) in seen:
            continue
        seen.add(tuple(sorted(link.items())))
        at = run(path, link)
        assert not at.exception, (path, link, [e.value for e in at.exception])
        widgets = bound_widgets(at)
        for key in sorted({*widgets, *published(at)} - set(found)):
            found[key] = describe(key, widgets.get(key), at, link)
            widget = widgets.get(key)
            if widget is not None and widget.type in CHOICE_KINDS:
                queue += [{**link, key: str(option)} for option in widget.options if option != widget.value]
        if not queue:
            queue = [u for u in _unions(p.context for p in found.values()) if tuple(sorted(u.items())) not in seen]
    return found


MISSING = "(no such control on the page)"


def current(at, param: Param):
    """The value a parameter's control holds after a run (MISSING if the run did not make it)."""
    widget = bound_widgets(at).get(param.key)
    if widget is None:
        return published(at).get(param.key, (None, MISSING))[1]
    return widget.value


def link_form(at, param: Param) -> str:
    """How a link writes the value the parameter's control holds."""
    widget = bound_widgets(at).get(param.key)
    if widget is not None and widget.type == "button_group":  # its options are shown by format_func
        return param.options[widget.indices[0]]
    return link_text(param.kind, current(at, param))


def sample(param: Param, kind: str, turn: int, default_text: str):
    """The `turn`-th sample of a hostile kind for this parameter."""
    if kind == "negative":  # below the minimum, for a slider that takes negative numbers
        return link_text("slider", param.low - 1) if param.low is not None and param.low < 0 else "-1"
    if kind == "repeated":  # two values, each one usable alone
        other = next((o for o in param.options if o != default_text), default_text)
        return [other, default_text] if turn % 2 == 0 else [default_text, other]
    samples = KINDS[kind]
    return samples[turn % len(samples)]


def usable_text(param: Param, value) -> bool:
    """Whether a text box can hold this link value as the user's text (one value, not too long)."""
    return param.text and isinstance(value, str) and len(value) <= param.max_chars


def check(path: str, params: list[Param], values: list, context: dict, baseline) -> list[str]:
    """Open the page with these values for these parameters: what went wrong, if anything."""
    link = {**context, **{p.key: v for p, v in zip(params, values, strict=True)}}
    at = run(path, link)
    shown = f"{path} with {({k: (v if len(str(v)) < 60 else f'{str(v)[:20]}…') for k, v in link.items()})}"
    if at.exception:
        return [f"{shown}: {[e.value for e in at.exception]}"]
    problems, notes, expected_lines = [], info_text(at), {}
    for param, value in zip(params, values, strict=True):
        got = current(at, param)
        if usable_text(param, value):
            if got != value:
                problems.append(f"{shown}: text box {param.key!r} holds {got!r}, not the link's text")
            continue
        if got != current(baseline, param):
            problems.append(f"{shown}: {param.key!r} shows {got!r}, not its default {current(baseline, param)!r}")
        label = f"**{escape_markdown(param.label)}**"
        expected_lines[label] = expected_lines.get(label, 0) + 1
    for label, count in expected_lines.items():
        named = sum(label in line for line in notes.splitlines())
        if named < count:
            problems.append(f"{shown}: the note names {label} {named} times, expected {count}:\n{notes}")
    return problems


def groups(path: str) -> list[tuple[dict, list[Param]]]:
    """The page's parameters by the link that makes them appear."""
    by_context: dict[tuple, list[Param]] = {}
    for param in url_parameters(path).values():
        by_context.setdefault(param.context, []).append(param)
    return [(dict(context), sorted(params, key=lambda p: p.key)) for context, params in by_context.items()]


@pytest.mark.parametrize("info", LESSONS, ids=lambda p: p.url_path)
def test_every_parameter_with_every_hostile_value(info):
    kinds, problems = list(KINDS), []
    for context, params in groups(info.path):
        baseline = run(info.path, context)
        assert not baseline.exception, (info.path, context, [e.value for e in baseline.exception])
        assert all(current(baseline, p) != MISSING for p in params), (info.path, context)
        defaults = {p.key: link_form(baseline, p) for p in params}
        for j in range(len(kinds)):
            values = [sample(p, kinds[(i + j) % len(kinds)], i, defaults[p.key]) for i, p in enumerate(params)]
            problems += check(info.path, params, values, context, baseline)
    assert not problems, f"{len(problems)} of the runs went wrong; the first ones:\n" + "\n".join(problems[:12])


def test_discovery_finds_the_parameters_every_lesson_shares():
    """`step` (a bound segmented control), `image` (a bound radio in the sidebar) and `present` (no
    bound widget, only published by UrlControls): guards the test above against finding too little.
    And every URL-bound widget is made through UrlControls, so its link value is judged by its rule."""
    for info in LESSONS:
        params = url_parameters(info.path)
        assert {"step", "image", "present"} <= set(params), info.url_path
        bypassing = [key for key, param in params.items() if not param.published]
        assert not bypassing, f"{info.url_path}: bound to the URL, not made through UrlControls: {bypassing}"
