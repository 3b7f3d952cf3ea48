"""A lesson's settings as a frozen dataclass whose fields are its controls.

    @dataclass(frozen=True)
    class DepthSettings:
        n_layers: int = setting(12, "Layers", url="layers", bounds=(1, 24, 1))
        width: int = setting(32, "Width d_model", url="width", options=(16, 32, 64))

Each field says what the control is (a number within bounds on a step, or one of some options), its
label and its name in the link; the lesson runtime (explorer/serve) makes the widgets from them and
keys its one cache by the settings.  `check` refuses a value outside a field's control, so a view
is never computed for settings no control could give.  No Streamlit here.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Control", "check", "controls_of", "setting"]


@dataclass(frozen=True)
class Control:
    """One setting's control: `bounds` (low, high, step) for a number, or `options` to choose from."""

    label: str
    url: str
    bounds: tuple[float, float, float] | None = None
    options: tuple | None = None
    help: str | None = None

    def __post_init__(self):
        if (self.bounds is None) == (self.options is None):
            raise ValueError(f"{self.label}: a control has bounds or options (one of the two)")

    def allows(self, value) -> bool:
        if self.options is not None:
            return value in self.options
        low, high, step = self.bounds
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            return False
        return math.isclose((value - low) / step, round((value - low) / step), abs_tol=1e-9)


def setting(default, label: str, *, url: str, bounds: Sequence[float] | None = None, options: Sequence | None = None,
            help: str | None = None):
    """A settings field with its control (see the module)."""
    control = Control(label, url, tuple(bounds) if bounds is not None else None,
                      tuple(options) if options is not None else None, help)
    if not control.allows(default):
        raise ValueError(f"{label}: the default {default!r} is not one its control allows")
    return dataclasses.field(default=default, metadata={"control": control})


def controls_of(settings_type: type) -> list[tuple[str, Control]]:
    """(field name, control) of every field of a settings dataclass, in order."""
    return [(f.name, f.metadata["control"]) for f in dataclasses.fields(settings_type) if "control" in f.metadata]


def check(settings) -> None:
    """Raise ValueError if a field holds a value its control does not allow."""
    wrong = [f"{control.label} = {getattr(settings, name)!r}" for name, control in controls_of(type(settings))
             if not control.allows(getattr(settings, name))]
    if wrong:
        raise ValueError("settings outside their controls: " + ", ".join(wrong))
