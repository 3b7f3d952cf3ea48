"""Lesson steps: a lecturer clicks through a page's short sequence of views — predict, then reveal.

Each lesson has its steps as data beside its prose (`prose.md`), in `explorer/lessons/<page>/lesson.toml`:

    [[steps]]
    title = "Where does “it” look?"
    settings = { task = "coreference", layer = 2, head = 1 }   # control key → value (typed)
    predict = "Which noun will the word “it” attend to most?"  # asked before the figure shows
    reveal = "It picks the animal when the adjective describes an agent…"  # shown with the figure
    section = "forcing"  # optional: the page section whose figure the step is about (default: the key figure)
    claim = "picks_noun"  # optional: the claim (explorer/kit/claims.py) that makes the answer true

A step about a section has that section drawn first, under the step bar, so the answer and the
figure it is about share the first screen.  The answer stands where the question stood.  With a
claim, the lesson runtime fills its numbers from the view and shows it only where the claim holds.

The step is in the URL (`step=3`), so a step is a link.  Choosing a step sets the page's controls to
its settings (a value the link itself sets wins, the first time a link is opened); then the page
shows the question and hides its figures until "Reveal".  Step 0 is free exploration.  Next and Back
answer a presentation clicker too (PageDown / PageUp): PageDown reveals first, then moves on.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from ..caching import loaded
from .claims import Claim, say
from .spec import LESSON_FOLDER as STEP_DIR
from .text import escape_markdown

__all__ = ["STEP_DIR", "STEP_KEY", "Lesson", "Step", "load_steps", "step_heading"]

STEP_KEY = "step"
_APPLIED = "_lesson_applied"  # session-state key: the (page, step) whose settings were last applied
_REVEALED = "_lesson_revealed"  # session-state key: (page, step) pairs revealed in this session
_JUST_REVEALED = "_lesson_just_revealed"  # session-state key: the (page, step) revealed by this run's click
STEP_SET = "_lesson_step_set"  # session-state key: the controls a click on a step has just set


@dataclass(frozen=True)
class Step:
    title: str
    predict: str
    reveal: str
    settings: Mapping[str, object]
    section: str = ""  # which of the page's sections shows what to see ("" = the key figure)
    claim: str = ""  # the claim that makes `reveal` true (its numbers are filled from the view)


@loaded(32)
def load_steps(page: str, directory: Path = STEP_DIR) -> tuple[Step, ...]:
    """The steps of a page (its url_path), checked: every step has a title, a question to predict,
    what to reveal, and a table of settings.  A page without a file has no steps."""
    path = directory / page / "lesson.toml"
    if not path.exists():
        return ()
    data = tomllib.loads(path.read_text())
    steps = []
    for number, raw in enumerate(data.get("steps", []), start=1):
        missing = [field for field in ("title", "predict", "reveal") if not str(raw.get(field, "")).strip()]
        if missing or not isinstance(raw.get("settings", {}), dict):
            raise ValueError(f"{page}/{path.name}, step {number}: needs {', '.join(missing) or 'a settings table'}")
        steps.append(Step(raw["title"].strip(), raw["predict"].strip(), raw["reveal"].strip(),
                          dict(raw.get("settings", {})), str(raw.get("section", "")).strip(),
                          str(raw.get("claim", "")).strip()))
    return tuple(steps)


# Presenting, an answer is read from the back of the room in one glance: about two lines at a projector's
# 1280 px (20 px text: ~115 characters a line, heading included, fewer where words wrap); past them, the
# first whole sentences within FOLDED_CHARS stay, and the others open from a button beside them
# (tests/browser/test_present_browser.py counts the lines).
ANSWER_CHARS = 215
FOLDED_CHARS = 195  # a folded answer shares its row with the "More" button: its lines are shorter
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=[A-Z0-9“\"(*`\[])")  # …and a sentence opening with [CLS]


def visible_length(markdown: str) -> int:
    """The characters `markdown` shows (its bold marks and code ticks are not drawn)."""
    return len(markdown.replace("**", "").replace("`", "").replace("\\", ""))


def fold(text: str, budget: int) -> tuple[str, str]:
    """`text` cut after its last whole sentence that ends within `budget` visible characters (its first
    sentence at least), and the rest ("" if nothing is left).  A sentence boundary inside bold or code
    is no boundary: the marks stay paired on both sides."""
    pieces = _SENTENCE_END.split(text)
    kept, shown = pieces[0], visible_length(pieces[0])
    for number, piece in enumerate(pieces[1:], start=1):
        paired = kept.count("**") % 2 == 0 and kept.count("`") % 2 == 0
        if paired and shown + 1 + visible_length(piece) > budget:
            return kept, " ".join(pieces[number:])
        kept, shown = f"{kept} {piece}", shown + 1 + visible_length(piece)
    return kept, ""


def presented(heading: str, text: str, budget: int | None = ANSWER_CHARS) -> tuple[str, str]:
    """An answer as the step bar shows it under `heading`: whole ((text, "")) where the two fit in
    `budget` visible characters (None: any length), else its first whole sentences within the share
    FOLDED_CHARS / ANSWER_CHARS of it, and the rest."""
    used = visible_length(heading) + 1
    if budget is None or used + visible_length(text) <= budget:
        return text, ""
    return fold(text, budget * FOLDED_CHARS // ANSWER_CHARS - used)


QUESTION_ICON = "psychology_alt"  # a step's question; its answer has another (presentation mode tells them apart)


def step_heading(number: int, total: int, title: str) -> str:
    """The bold line above a step: "Step 2 of 5 · Title." (no full stop after a title that ends in ?, ! or .)."""
    end = "" if title.rstrip()[-1:] in (".", "?", "!", "…") else "."
    return f"**Step {number} of {total} · {escape_markdown(title)}{end}**"


class Lesson:
    """The step bar of one page.  Create it before the page's controls (it may set their values),
    then draw the figures only `if lesson.revealed`, and call `answer()` once the view is known."""

    def __init__(self, page: str, controls, *, where=st, fold_after: int | None = None):
        """`fold_after`: the visible characters of an answer shown before the rest folds away (presenting:
        `ANSWER_CHARS`); None shows every answer whole."""
        self.page = page
        self.fold_after = fold_after
        self.steps = load_steps(page)
        self.number = 0
        if not self.steps:
            return
        options = list(range(len(self.steps) + 1))
        chooser, back, forward = where.columns([5, 2, 3], vertical_alignment="center")
        self.number = controls.segmented_control(
            "Lesson step", options, 0, STEP_KEY, where=chooser, format_func=lambda n: "Explore" if n == 0 else str(n),
            on_change=self._apply, args=(True,), label_visibility="collapsed",
            help="Step through the lesson: each step sets the controls, asks you to predict, then reveals.",
        )
        if st.session_state.get(_APPLIED) != (page, self.number):  # opened from a link
            self._apply(from_widget=False)
        self._bar(back, forward, where)

    @property
    def step(self) -> Step | None:
        return self.steps[self.number - 1] if self.number else None

    @property
    def revealed(self) -> bool:
        """Whether figures may show: always outside a step; inside one, after "Reveal"."""
        return self.step is None or (self.page, self.number) in st.session_state.get(_REVEALED, set())

    def _apply(self, from_widget: bool) -> None:
        """Set the controls to the current step's settings (in a callback, or before the widgets exist)."""
        number = st.session_state.get(STEP_KEY, 0) or 0
        st.session_state[_APPLIED] = (self.page, number)
        if not number:
            return
        linked = set() if from_widget else set(st.query_params)
        applied = [key for key in self.steps[number - 1].settings if key not in linked]
        for key in applied:
            st.session_state[key] = self.steps[number - 1].settings[key]
        if from_widget:
            st.session_state[STEP_SET] = set(applied)  # for the run the click starts (controls.py)

    def _go(self, number: int) -> None:
        st.session_state[STEP_KEY] = max(0, min(len(self.steps), number))
        self._apply(from_widget=True)

    def _reveal(self) -> None:
        st.session_state.setdefault(_REVEALED, set()).add((self.page, self.number))
        st.session_state[_JUST_REVEALED] = (self.page, self.number)

    @property
    def just_revealed(self) -> bool:
        """Whether this run is the one a Reveal (or the clicker's first PageDown) started: the page had
        no figures a moment ago, so nothing on screen is replaced if its sections come in stages."""
        return st.session_state.pop(_JUST_REVEALED, None) == (self.page, self.number) and self.step is not None

    def _forward(self) -> None:
        """Next on a clicker: reveal the current step first, then move on."""
        if not self.revealed:
            self._reveal()
            self._apply(from_widget=True)  # again: controls not drawn while the figures were hidden
        else:
            self._go(self.number + 1)

    def _bar(self, back, forward, where) -> None:
        step = self.step
        back.button("Back", icon=":material/arrow_back:", on_click=self._go, args=(self.number - 1,),
                    disabled=self.number == 0, key="lesson_back", shortcut="PageUp", width="stretch")
        label = "Reveal" if step and not self.revealed else "Next"
        forward.button(label, icon=":material/arrow_forward:", on_click=self._forward, key="lesson_next",
                       disabled=self.number == len(self.steps) and self.revealed, shortcut="PageDown",
                       width="stretch", type="primary" if step else "secondary")
        if step is None:
            return
        heading = step_heading(self.number, len(self.steps), step.title)
        if not self.revealed:
            where.info(f"{heading} {step.predict}", icon=f":material/{QUESTION_ICON}:")
            return
        self._heading = heading
        self._answer = where.empty()  # the answer takes the question's place, above the figure
        if not step.claim:
            self._say(self._answer, step.reveal)

    def _say(self, where, text: str) -> None:
        """The answer under its heading, in `where` (a placeholder); past `fold_after` characters, its
        first sentences, and beside them a "More" button that opens the others over the page.  (An
        expander under the answer pushed the figure's foot off a projector's screen, attention step 1 to
        748 px of 720; under the step's whole section it stood 1,000–2,400 px down, out of reach.)"""
        shown, rest = presented(self._heading, text, self.fold_after)
        if not rest:
            where.success(f"{self._heading} {text}", icon=":material/visibility:")
            return
        said, more = where.container().columns([9, 1], vertical_alignment="center", gap="small")
        said.success(f"{self._heading} {shown} …", icon=":material/visibility:")
        more.popover("More", help="The rest of this step's answer", width="stretch").markdown(rest)

    @property
    def section(self) -> str:
        """The section the revealed step is about ("" = the key figure, or no step)."""
        return self.step.section if self.step is not None and self.revealed else ""

    def answer(self, claims: Mapping[str, Claim], shown, where=None, waiting: str = "") -> None:
        """The revealed step's answer, its numbers read from what is `shown` (runtime.Shown), in the
        step bar (or `where`: a section with controls of its own answers inside itself).  Where its
        claim cannot be judged yet (a live run not finished), `waiting` says when it will be; where
        it does not hold, the answer is not shown and the step says why: the controls moved on since
        the step set them, or (at the step's own settings) what is shown turned out otherwise."""
        step = self.step
        if step is None or not self.revealed or not step.claim:
            return
        where = self._answer if where is None else where
        if not claims[step.claim].ready(shown):
            where.info(f"{self._heading} {waiting}", icon=":material/hourglass_top:")
            return
        text = say(claims, step.claim, step.reveal, shown)
        if text is not None:
            self._say(where, text)
        elif any(st.session_state.get(key) != value for key, value in step.settings.items()):
            where.info(f"{self._heading} The controls have moved away from this step's settings, and its "
                       "answer does not hold for the figure now shown. Choose the step again to return "
                       "to them.", icon=":material/undo:")
        else:
            where.info(f"{self._heading} This time the figure did not turn out as this step's answer "
                       "describes, so the answer is not shown: read the figure itself.", icon=":material/info:")
