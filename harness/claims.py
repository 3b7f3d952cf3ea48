"""The check behind "claims are code" (explorer/kit/claims.py), for the tests: every sentence a lesson
states about its figure — a step's answer, a "claim: name" section of its prose — is checked against
the views it stands beside.

    problems(lesson, parts, n=30) -> list of what is wrong (empty: every claim checked holds)

- every lesson step with a claim: the claim holds at the step's own settings (that is what the
  class is shown after Reveal), and its sentence fills from the view;
- over `n` settings (the extremes of every control, then at random): every claim evaluates, and
  where it holds its sentences fill (a claim is free not to hold: its sentence is then not shown);
- with `around`: at every step's settings with one control moved to its lowest and its highest
  choice (the others as the step set them, or, where that is no longer allowed, the controls after
  it at their defaults): the same as for the sampled settings, where a step's claims are most often
  in play (the random samples seldom meet a shipped trained shape);
- no sentence about the figure carries a number typed by hand: a step's answer may repeat a number
  of its own question (the options the class chose among; the claim decides which is right), a
  claim's prose section none.
"""

from __future__ import annotations

from explorer.kit.claims import say, typed_numbers
from explorer.kit.prose import lesson_sections, lesson_text
from explorer.kit.settings import _values as choices
from explorer.kit.settings import check, controls_of, samples
from explorer.kit.spec import LessonSpec
from explorer.kit.steps import load_steps
from explorer.lessons import specs
from explorer.serve import runtime

LESSONS = specs()

__all__ = ["answer", "around", "claim_texts", "problems", "step_view"]


def claim_texts(lesson: LessonSpec, steps) -> dict[str, list[str]]:
    """{claim name: its sentences}: the prose sections "claim: name" and the steps' answers."""
    texts: dict[str, list[str]] = {name: [] for name in lesson.claims}
    try:
        sections = lesson_sections(lesson.page)
    except FileNotFoundError:
        sections = {}
    for title, text in sections.items():
        if title.startswith("claim: ") and title[7:] in texts:
            texts[title[7:]].append(text)
    for step in steps:
        if step.claim in texts:
            texts[step.claim].append(step.reveal)
    return texts


def step_settings(page: LessonSpec, part: LessonSpec | None, link):
    """The lesson's (or section's) settings at a step's values (`link`, by the controls' URL names)."""
    main = runtime.at_step(page, link)
    return main if part is None else runtime.at_step(part, link, main)


def step_view(page: LessonSpec, part: LessonSpec | None, step):
    """What a step shows: its lesson's (or section's) settings at the step's values, computed."""
    return runtime.shown(part or page, step_settings(page, part, step.settings))


def around(page: LessonSpec, part: LessonSpec | None, link) -> list:
    """A step's settings with one control at a time moved to its lowest and its highest choice; where
    the step's other values no longer fit, the controls after the moved one take their defaults."""
    spec = part or page
    at = step_settings(page, part, link)
    found = []
    controls = [(name, control) for name, control in controls_of(spec.settings)
                if control.applies(at) and control.max_chars is None]
    for index, (name, control) in enumerate(controls):
        values = choices(control, at)
        for value in {values[0], values[-1]} - {getattr(at, name)}:
            moved = {**link, control.url: value}
            for attempt in (moved, {k: v for k, v in moved.items()
                                    if k not in {c.url for _, c in controls[index + 1:]}}):
                try:
                    settings = step_settings(page, part, attempt)
                    check(settings)
                except ValueError:
                    continue
                found.append(settings)
                break
    return found


def answer(page: str, step) -> str:
    """The answer a step shows after Reveal: its sentence, with its claim's numbers read from the view;
    for a claim about a live run (not `ready` at Reveal: nothing trained yet), the note that it waits."""
    if not step.claim:
        return step.reveal
    main = next(lesson for lesson in LESSONS if lesson.page == page and lesson.section is None)
    part = next((lesson for lesson in LESSONS if lesson.page == page and lesson.section == step.section), None)
    spec = part or main
    shown = step_view(main, part, step)
    if not spec.claims[step.claim].ready(shown):
        return lesson_text(page, "answer waits", start=spec.live.start(shown.settings))
    text = say(spec.claims, step.claim, step.reveal, shown)
    assert text is not None, f"{page}: the claim {step.claim!r} does not hold at its step's settings"
    return text


def problems(page: LessonSpec, parts: dict[str, LessonSpec], n: int = 30, steps=None,
             near: bool = False) -> list[str]:
    """What is wrong with the claims of a lesson (`page`) and its sections with settings of their own
    (`parts`, by section name), over `n` sampled settings and (`near`) around every step: see the module."""
    steps = load_steps(page.page) if steps is None else steps
    found = []
    nearby: dict[str, list] = {}
    if near:
        for step in steps:
            part = parts.get(step.section)
            nearby.setdefault((part or page).name, []).extend(around(page, part, step.settings))
    for number, step in enumerate(steps, start=1):
        where = f"{page.page} step {number} ({step.title})"
        spec = parts.get(step.section, page)
        extra = sorted(set(typed_numbers(step.reveal)) - set(typed_numbers(step.predict)))
        if extra:
            found.append(f"{where}: typed numbers in the answer: {extra}")
        if not step.claim:
            found.append(f"{where}: no claim")
            continue
        if step.claim not in spec.claims:
            found.append(f"{where}: no claim {step.claim!r} in {spec.name}")
            continue
        shown = step_view(page, parts.get(step.section), step)
        try:
            if say(spec.claims, step.claim, step.reveal, shown) is None:
                found.append(f"{where}: claim {step.claim!r} does not hold at the step's settings")
        except (KeyError, ValueError, TypeError) as problem:
            found.append(f"{where}: the answer does not fill: {problem}")
    for spec in (page, *parts.values()):
        texts = claim_texts(spec, steps)
        for name, sentences in texts.items():
            for text in sentences:
                if text not in [s.reveal for s in steps] and typed_numbers(text):
                    found.append(f"{spec.name}, claim {name!r}: typed numbers {typed_numbers(text)}")
        given = {}
        if spec is not page:
            given = {name: field.default for name, field in spec.settings.__dataclass_fields__.items()
                     if "control" not in field.metadata}
        for settings in samples(spec.settings, n, **given) + nearby.get(spec.name, []):
            shown = runtime.shown(spec, settings)
            for name, claim in spec.claims.items():
                try:
                    if not claim.holds(shown):
                        continue
                    for text in texts[name]:
                        say(spec.claims, name, text, shown)
                except Exception as problem:  # each failure is a finding, reported whole
                    found.append(f"{spec.name} at {settings}: claim {name!r}: {type(problem).__name__}: {problem}")
    return found
