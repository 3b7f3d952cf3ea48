"""A lesson's settings as a frozen dataclass whose fields are its controls.

    @dataclass(frozen=True)
    class DepthSettings:
        n_layers: int = setting(12, "Layers", url="layers", bounds=(1, 24, 1))
        width: int = setting(32, "Width d_model", url="width", options=(16, 32, 64))

Each field says what its control is — a number within `bounds` (low, high, step), one of some
`options`, a `flag`, or `text` of at most `max_chars` — its label and its name in the link.  The
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
A field with no control (a plain default) is filled by the runtime from the lesson's main settings
(a section's own settings take the sidebar's `init` so), or is left at its default.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import SimpleNamespace

__all__ = ["Control", "check", "controls_of", "setting", "so_far"]

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

    def __post_init__(self):
        kinds = (self.bounds is not None) + (self.options is not None) + self.flag + (self.max_chars is not None)
        if kinds != 1:
            raise ValueError(f"{self.label}: a control has one of bounds, options, flag or max_chars")
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


def setting(default, label: str, *, url: str, bounds: Sequence[float] | Callable | None = None,
            options: Sequence | Callable | None = None, flag: bool = False, max_chars: int | None = None,
            help: str | None = None, widget: str | None = None, default_from: Callable | None = None,
            when: Callable | None = None, enabled: Callable | None = None,
            captions: Sequence[str] | Callable | None = None, format: Callable | None = None):
    """A settings field with its control (see the module)."""
    control = Control(label, url, tuple(bounds) if isinstance(bounds, Sequence) else bounds,
                      tuple(options) if isinstance(options, Sequence) else options, help, widget, flag, max_chars,
                      default_from, when, enabled,
                      captions if callable(captions) else tuple(captions) if captions else None, format)
    if not callable(control.options) and not callable(control.bounds) and not control.allows(default):
        raise ValueError(f"{label}: the default {default!r} is not one its control allows")
    return dataclasses.field(default=default, metadata={"control": control})


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
