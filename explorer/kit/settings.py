"""A lesson's settings as a frozen dataclass whose fields are its controls.

    @dataclass(frozen=True)
    class DepthSettings:
        n_layers: int = setting(12, "Layers", url="layers", bounds=(1, 24, 1))
        width: int = setting(32, "Width d_model", url="width", options=(16, 32, 64))

Each field says what its control is — a number within `bounds` (low, high, step), one of some
`options`, a `flag`, or `text` of at most `max_chars` — its label and its name in the link.
A text may come with `presets` ({name: text}): the control is a picker of those names and "your own
text…", which opens a box (`text_label`, in the link as `text_url`); the field holds the text.  A
number may have an `advance` button (its label): one click moves it one step on, from the highest
back to the lowest (a shuffle's seed).  The
lesson runtime (explorer/serve) makes the widgets from them, in field order, and keys its one cache
by the settings.  `check` refuses a value outside a field's control, so a view is never computed for
settings no control could give.  No Streamlit here.

A control may depend on the fields before it, each given as a function of those settings so far
(an object with them as attributes):
    options / bounds   a function: a head slider runs up to the chosen number of heads (a radio's
                       captions, one per option, may be a function too)
    default_from       the default follows them (a task's own model shape); when they change, the
                       control goes back to its new default
    when               the control exists only then; otherwise the field holds its default
    enabled            the control is shown greyed out otherwise (and the value is kept)
    resets_with        when its value changes (a task switch), the control goes back to its default,
                       even where the default itself stays the same
    note               a caption under the control, from the settings with its own value
A `heading` names the control's group (in the sidebar): it is drawn above the first control of the group made.
A control with `main=True` is drawn in the page, in a row above the key figure, instead of in the
sidebar: the one a lecturer moves while presenting (the sidebar is folded away then).
A field with no control (a plain default) is filled by the runtime from the lesson's main settings
(a section's own settings take the sidebar's `init` so), or is left at its default.
"""

from __future__ import annotations

import dataclasses
import math
import random
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace

from explorer.training.parsed_input import OWN_TEXT

__all__ = ["Control", "check", "controls_of", "from_link", "own_text", "picked_text", "picker", "samples", "setting",
           "so_far"]

WIDGETS = ("slider", "select_slider", "selectbox", "radio", "toggle", "text")


@dataclass(frozen=True)
class Control:
    """One setting's control (see the module)."""

    label: str
    url: str
    bounds: tuple[float, float, float] | Callable | None = None
    options: tuple | Callable | None = None
    help: str | None = None
    widget: str | None = None  # how it is drawn; by default from what it is
    flag: bool = False
    max_chars: int | None = None  # a text control
    default_from: Callable | None = None
    when: Callable | None = None
    enabled: Callable | None = None
    captions: tuple[str, ...] | Callable | None = None  # a radio's, one per option (a function: as options)
    format: Callable | None = None  # how an option is shown
    resets_with: Callable | None = None
    note: Callable | None = None
    heading: str | None = None
    main: bool = False  # drawn above the key figure, not in the sidebar
    presets: Mapping[str, str] | None = None  # a text control: named examples, or the user's own text
    text_url: str | None = None  # ... the own text's name in the link
    text_label: str | None = None
    advance: str | None = None  # a number control: the label of a button that moves it one step on

    def __post_init__(self):
        kinds = (self.bounds is not None) + (self.options is not None) + self.flag + (self.max_chars is not None)
        if kinds != 1:
            raise ValueError(f"{self.label}: a control has one of bounds, options, flag or max_chars")
        if self.presets is not None and (self.max_chars is None or not self.text_url):
            raise ValueError(f"{self.label}: presets are for a text control, with a text_url")
        if self.advance is not None and self.bounds is None:
            raise ValueError(f"{self.label}: an advance button moves a number control")
        if self.widget is not None and self.widget not in WIDGETS:
            raise ValueError(f"{self.label}: no widget {self.widget!r} (one of {WIDGETS})")

    def choices(self, settings) -> tuple | None:
        """The options at these settings (so far), or None for a number, flag or text."""
        return tuple(self.options(settings)) if callable(self.options) else self.options

    def captions_at(self, settings) -> tuple[str, ...] | None:
        """A radio's captions at these settings (so far), one per option."""
        return tuple(self.captions(settings)) if callable(self.captions) else self.captions

    def limits(self, settings) -> tuple[float, float, float] | None:
        return tuple(self.bounds(settings)) if callable(self.bounds) else self.bounds

    def applies(self, settings) -> bool:
        return self.when is None or bool(self.when(settings))

    def allows(self, value, settings=None) -> bool:
        """May the control hold `value` (at `settings`, for a control that depends on others)?"""
        if self.flag:
            return isinstance(value, bool)
        if self.max_chars is not None:
            return isinstance(value, str) and len(value) <= self.max_chars
        choices = self.choices(settings)
        if choices is not None:
            return value in choices
        low, high, step = self.limits(settings)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            return False
        return math.isclose((value - low) / step, round((value - low) / step), abs_tol=1e-9)

    def nearest(self, value, settings=None):
        """The value this number control allows that is nearest to `value` (within its bounds, on its
        steps); any other control's `value` as it is."""
        if self.bounds is None:
            return value
        low, high, step = self.limits(settings)
        snapped = low + round((min(max(float(value), low), high) - low) / step) * step
        number = int if all(isinstance(v, int) for v in (low, high, step)) else float
        return number(round(min(snapped, high), 10))


def setting(default, label: str, *, url: str, bounds: Sequence[float] | Callable | None = None,
            options: Sequence | Callable | None = None, flag: bool = False, max_chars: int | None = None,
            help: str | None = None, widget: str | None = None, default_from: Callable | None = None,
            when: Callable | None = None, enabled: Callable | None = None,
            captions: Sequence[str] | Callable | None = None, format: Callable | None = None,
            resets_with: Callable | None = None, note: Callable | None = None, heading: str | None = None,
            main: bool = False, presets: Mapping[str, str] | None = None, text_url: str | None = None,
            text_label: str | None = None, advance: str | None = None):
    """A settings field with its control (see the module)."""
    control = Control(label, url, tuple(bounds) if isinstance(bounds, Sequence) else bounds,
                      tuple(options) if isinstance(options, Sequence) else options, help, widget, flag, max_chars,
                      default_from, when, enabled,
                      captions if callable(captions) else tuple(captions) if captions else None, format, resets_with,
                      note, heading, main, types.MappingProxyType(dict(presets)) if presets is not None else None,
                      text_url, text_label, advance)
    if not callable(control.options) and not callable(control.bounds) and not control.allows(default):
        raise ValueError(f"{label}: the default {default!r} is not one its control allows")
    return dataclasses.field(default=default, metadata={"control": control})


def picker(task: str, presets: Sequence[str], label: str = "Input", widget: str | None = None):
    """The preset picker of one task's input, field `input_<task>` (there while that task is chosen):
    the task's examples, then OWN_TEXT, which opens the text box `own_text(task, ...)`."""
    return setting(presets[0], label, url=f"input_{task}", options=(*presets, OWN_TEXT), widget=widget,
                   when=lambda s: s.task == task)


def own_text(task: str, default: str, max_chars: int, help: str):
    """The text box under a task's preset picker, field `text_<task>`: there while the picker says OWN_TEXT."""
    return setting(default, "Your input", url=f"text_{task}", max_chars=max_chars, help=help,
                   when=lambda s: s.task == task and getattr(s, f"input_{task}") == OWN_TEXT)


def picked_text(settings, task: str) -> str:
    """The text of a task's input (`picker`, `own_text`): the example picked, or the text typed."""
    picked = getattr(settings, f"input_{task}")
    return getattr(settings, f"text_{task}") if picked == OWN_TEXT else picked


def controls_of(settings_type: type) -> list[tuple[str, Control]]:
    """(field name, control) of every field of a settings dataclass, in order."""
    return [(f.name, f.metadata["control"]) for f in dataclasses.fields(settings_type) if "control" in f.metadata]


def so_far(values: dict) -> SimpleNamespace:
    """The settings made so far, as the functions of a dependent control see them."""
    return SimpleNamespace(**values)


def check(settings) -> None:
    """Raise ValueError if a field holds a value its control does not allow (a control that does
    not apply at these settings must hold its default)."""
    wrong = []
    for name, control in controls_of(type(settings)):
        value = getattr(settings, name)
        if control.applies(settings):
            ok = control.allows(value, settings)
        else:
            ok = value == _default(type(settings), name, control, settings)
        if not ok:
            wrong.append(f"{control.label} = {value!r}")
    if wrong:
        raise ValueError("settings outside their controls: " + ", ".join(wrong))


def _default(settings_type: type, name: str, control: Control, settings):
    if control.default_from is not None:
        return control.default_from(settings)
    return next(f.default for f in dataclasses.fields(settings_type) if f.name == name)


def from_link(settings_type: type, values: Mapping[str, object], **given):
    """The settings a link's (or a lesson step's) values give, keyed by the controls' URL names: the
    others take their defaults (a dependent default follows the fields before it); `given` sets
    fields by name (a section's settings that follow the page's)."""
    controls = dict(controls_of(settings_type))
    made = dict(given)
    for field in dataclasses.fields(settings_type):
        if field.name in made:
            continue
        control = controls.get(field.name)
        if control is not None and control.url in values and control.applies(so_far(made)):
            made[field.name] = values[control.url]
            if control.presets is not None:  # a text with presets: the link names a preset or its own text
                own = values.get(control.text_url, field.default)
                made[field.name] = control.presets.get(values[control.url], own)
        elif control is not None and control.default_from is not None:
            made[field.name] = control.default_from(so_far(made))
        else:
            made[field.name] = field.default
    return settings_type(**made)


def samples(settings_type: type, n: int, seed: int = 0, **given) -> list:
    """`n` settings at random within the controls, the first ones at the extremes (every control at its
    lowest, then at its highest choice, the others at random): what a test of a lesson's claims
    walks through.  Text controls keep their defaults."""
    rng = random.Random(seed)
    out = []
    for index in range(n):
        made = dict(given)
        for field in dataclasses.fields(settings_type):
            if field.name in made:
                continue
            control = field.metadata.get("control")
            settings = so_far(made)
            if control is None or not control.applies(settings) or control.max_chars is not None:
                made[field.name] = _default(settings_type, field.name, control, settings) if control else field.default
                continue
            values = _values(control, settings)
            pick = {0: 0, 1: -1}.get(index) if index < 2 else None
            made[field.name] = values[pick] if pick is not None else rng.choice(values)
        out.append(settings_type(**made))
    return out


def _values(control: Control, settings) -> list:
    if control.flag:
        return [False, True]
    choices = control.choices(settings)
    if choices is not None:
        return list(choices)
    low, high, step = control.limits(settings)
    count = round((high - low) / step)
    number = int if all(isinstance(v, int) for v in (low, high, step)) else float
    return [number(round(low + i * step, 10)) for i in range(count + 1)]
