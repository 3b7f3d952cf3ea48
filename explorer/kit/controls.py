"""Shared Streamlit helpers — the only module of `explorer` that imports streamlit.

Every control is bound to the URL (`bind="query-params"`), so a copied link reopens the exact view.
What a link says is read in one place for every control, explorer.kit.links: a value the control
cannot take (empty, junk, out of range, NaN, another script's digits, given twice, too long) is not
handed to Streamlit at all.  `UrlControls` makes that control unbound for the run that opened the
link, so it shows its default, takes the value out of the address and tells the user which value
was ignored, why, and what is shown instead.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Sequence

import streamlit as st

from ..figures.ink import vega_inked
from ..training.parsed_input import OWN_TEXT
from .first_chart import chart_sent
from .internals import StreamlitAPIException, arrow_bytes
from .links import Choice, Flag, Number, Text, Unusable, read
from .present import presenting
from .steps import STEP_SET
from .text import escape_markdown, quoted

__all__ = ["NOWHERE", "OWN_TEXT", "PARAMETERS_KEY", "UrlControls", "altair_chart", "download_csv", "vega_lite_spec"]

PARAMETERS_KEY = "_url_parameters"  # session state: this page's URL parameters, {key: (label, value)}


def _same(value, wanted) -> bool:
    """Is the value a widget ended up with the one the link asked for?"""
    if isinstance(value, (int, float)) and isinstance(wanted, (int, float)) and not isinstance(value, bool):
        return math.isclose(float(value), float(wanted), rel_tol=1e-9, abs_tol=1e-12)
    return value == wanted


class _Nowhere:
    """A place that draws nothing: every Streamlit call on it is dropped (a staged run's sidebar)."""

    def __getattr__(self, name: str):
        return _nothing

    def __repr__(self) -> str:
        return "NOWHERE"


def _nothing(*args, **kwargs) -> None:
    return None


NOWHERE = _Nowhere()


class UrlControls:
    """Creates URL-bound widgets and reports link parameters that could not be used.

    Create one per page run, make every control through it, then call `report()` once.  With a
    `page` name the link is read only when the session opens the page, when the address really
    came from outside: later runs' addresses are written by the page's own widgets (a control that
    a task switch removes leaves nothing to complain about).  Each link value is judged once, by
    the first run that makes its control (a section's controls may come a run or two later: after
    Reveal, or in the section's own run), and reported once, by that run's `report()`.

    Each control has a rule (explorer.kit.links) for what a link may say.  A control whose link value
    its rule rejects is made without `bind` in the run that judges it (Streamlit would parse the
    value its own, more lenient, way: `?step=` made the lesson step None, `?task=sort&task=reverse`
    took the last, "５" took 5, "1_0" took 10): it shows its default, the value leaves the address,
    and the note says why.  It stays unbound for the rest of the visit, and each run writes its
    value to the address itself (`_mirror`): binding it again would leave the address behind a
    move made before the browser had the bound control, and Streamlit's resync of a bound value
    sends the browser that run's value back, undoing the quick presses made meanwhile.  A value
    the rule accepts is left to Streamlit's binding; if Streamlit still ends up elsewhere, the
    note says so.

    Every run publishes the page's parameters, with their labels and the values last recorded, in
    session state (`PARAMETERS_KEY`), so the tests can find every URL parameter a page reads, also
    those not made as bound widgets (`record`, such as `present`).
    """

    _OPENED = "_url_controls_page"  # session-state key: the page whose link was last read
    _PENDING = "_url_controls_pending"  # session-state key: its link values not yet reported
    _UNBOUND = "_url_controls_unbound"  # session-state key: {key: default} of controls kept unbound this visit
    _SEEN = "_url_controls_seen"  # session-state key: every control key a page of this session made
    SESSION_WIDE = frozenset({"present", "image"})  # settings of the whole app, kept from lesson to lesson

    def __init__(self, page: str | None = None):
        # What the link asked for, read before any widget consumes or clears it; a lesson page keeps
        # the values its run did not judge yet (controls it makes in a later run) in session state.
        self._requested = {key: st.query_params.get_all(key) for key in st.query_params}
        self.opened = page is not None and st.session_state.get(self._OPENED) != page
        if page is not None:
            if not self.opened:
                self._requested = st.session_state.get(self._PENDING, {})
            elif st.session_state.get(self._OPENED) is not None:
                self._forget_other_lessons()
            st.session_state[self._OPENED] = page
            st.session_state[self._PENDING] = self._requested  # judged and reported values leave it
        self._controls: dict[str, tuple[str, object, object]] = {}  # key -> (label, value, rule)
        self._wanted: dict[str, object] = {}  # key -> the value the link asked for, when usable
        self._unusable: dict[str, str] = {}  # key -> why the link's value could not be used
        self._notes: list[str] = []
        self._put_off: set[str] = set()  # keys of controls a section makes in a run of its own
        self._known: set[str] = set()  # keys of every control of the page, made in this run or not
        self._step_set = st.session_state.pop(STEP_SET, set()) if page is not None else set()

    def know(self, keys: Sequence[str]) -> None:
        """These are the page's controls' keys, also those that do not apply with the settings chosen
        (a link value for one of them is noted as such, not as unknown)."""
        self._known.update(keys)

    def _forget_other_lessons(self) -> None:
        """A lesson opened from another one starts as a fresh visit to it would: the values the session's
        other pages left under their control keys (`head`, `width`: the same names mean other things
        elsewhere) are dropped, except what this page's link says and the app-wide settings."""
        for key in st.session_state.get(self._SEEN, set()) - set(self._requested) - self.SESSION_WIDE:
            st.session_state.pop(key, None)
        st.session_state.pop(self._UNBOUND, None)

    def put_off(self, keys: Sequence[str]) -> None:
        """These controls are made in a later run (`below_the_fold`): this run's note leaves them out,
        and that run notes them under their section (`report(only=keys)`)."""
        self._put_off.update(keys)

    def link_value(self, key: str, rule):
        """What this run's link asks for `key` under `rule` (explorer.kit.links), or None: no link
        value, or one the rule rejects (remembered for the note).  The one place a link is read."""
        if key not in self._requested:
            return None
        try:
            self._wanted[key] = read(self._requested[key], rule)
        except Unusable as why:
            self._unusable[key] = str(why)
            return None
        return self._wanted[key]

    def note_coming(self, later: Sequence[str] = ()) -> bool:
        """Will this page's note have something to say about what its controls read so far: a link value
        a rule rejected, a parameter no control asked for (but for `later`: keys of controls made
        under the key figure, whose note stands under them), or a note added?  Asked by a staged opening
        (explorer/serve/opening.py) before its key figure: the note stands above it."""
        asked = set(self._wanted) | set(self._unusable) | set(later)
        return bool(self._unusable or self._notes) or any(key not in asked for key in self._requested)

    def rejected(self, key: str) -> bool:
        """Whether this run's link had a value for `key` that could not be used (see `link_value`)."""
        return key in self._unusable

    def _bind(self, key: str, rule, default) -> str | None:
        """The `bind` of a control: "query-params", or None for a control this visit's link gave a
        value it cannot take.  The run that judges that value sets the control to its default (through
        session state: a value the session kept from an earlier visit would show otherwise) and drops
        the value from the address; the control then stays unbound until the session opens another
        lesson, and `record` writes its value to the address."""
        self.link_value(key, rule)
        unbound = st.session_state.setdefault(self._UNBOUND, {})
        if self.rejected(key):
            st.session_state[key] = default
            with contextlib.suppress(StreamlitAPIException):  # still bound to a widget of a page the session left
                st.query_params.pop(key, None)
            unbound[key] = default
            return None
        if key in unbound:
            unbound[key] = default  # this run's: a default that follows another control may have moved
            return None
        return "query-params"

    def _mirror(self, key: str, value, rule) -> None:
        """Write an unbound control's value to the address as Streamlit's binding would: its text
        (`rule.text`), or nothing at its default.  The address a run sees is the browser's when the
        run was asked for, so nothing is sent when it already says the value."""
        default = st.session_state.get(self._UNBOUND, {}).get(key, value)
        wanted = [] if _same(value, default) else [rule.text(value)]
        if st.query_params.get_all(key) == wanted:
            return
        with contextlib.suppress(StreamlitAPIException):  # bound by a widget of another page: not ours to write
            if wanted:
                st.query_params[key] = wanted[0]
            else:
                st.query_params.pop(key, None)

    def record(self, key: str, label: str, value, rule):
        """Count a control as a setting of this page (the link may carry it), with its link rule.
        A control made elsewhere reads its link value through `link_value` first."""
        self._controls[key] = (label, value, rule)
        if key in st.session_state.get(self._UNBOUND, {}):
            self._mirror(key, value, rule)
        st.session_state.setdefault(self._SEEN, set()).add(key)
        st.session_state[PARAMETERS_KEY] = {k: (lab, val) for k, (lab, val, _) in self._controls.items()}
        return value

    def note(self, message: str, *, about: str | None = None) -> None:
        """Add a message to the note shown by `report()` (e.g. a typed value the page rejected).

        `message` is Markdown written by the page; text that came from the user or a link must be
        passed through `escape_markdown` first.  `about` names the control, shown in bold."""
        self._notes.append(message if about is None else f"**{escape_markdown(about)}**: {message}")

    @staticmethod
    def _forget_if_invalid(key: str, rule) -> None:
        """Session state is shared by every page of a session: a value another page left under the same
        key (say `head` = "mean" from the decoder lesson) is dropped if this control cannot hold it."""
        if key in st.session_state and not rule.holds(st.session_state[key]):
            del st.session_state[key]

    def _unseen(self, key: str, default, rule):
        """The value a control placed `NOWHERE` (a staged run's sidebar, explorer.serve.opening) will take
        when the whole page's run makes it, without making it: the session's value if the control can
        hold it, else the link's if its rule accepts it, else the default — what Streamlit gives a
        bound widget."""
        if key in st.session_state and rule.holds(st.session_state[key]):
            return st.session_state[key]
        wanted = self.link_value(key, rule)  # None: no value in the link, or one the rule rejects
        return default if wanted is None else wanted

    def slider(self, label, min_value, max_value, value, step, key, *, where=st, **kwargs):
        """A slider of one number (a link gives one value, so not a range slider)."""
        rule = Number(min_value, max_value, step)
        if where is NOWHERE:
            return self._unseen(key, value, rule)
        self._forget_if_invalid(key, rule)
        bind = self._bind(key, rule, value)
        if key in self._step_set:
            # Streamlit counts a slider's ends in its identity: a step whose example moves them makes a
            # new slider, and a new bound slider takes the address's value, the previous step's, over the
            # one the step set (the decoder's step 6 showed t = 3 until Reveal).  So it stays unbound this
            # visit, as a rejected link value's control does, and `record` writes its value to the address.
            st.session_state.setdefault(self._UNBOUND, {})[key] = value
            bind = None
        chosen = where.slider(label, min_value=min_value, max_value=max_value, value=value, step=step,
                              key=key, bind=bind, **kwargs)
        return self.record(key, label, chosen, rule)

    def _choice(self, widget: str, label, options: Sequence, default, key, where, kwargs: dict, index=None):
        """A control that picks one of `options` (`default`: the option itself; `index`: its place, for the
        widgets given their default that way)."""
        rule = Choice(list(options), kwargs.get("format_func", str))
        if where is NOWHERE:
            return self._unseen(key, default, rule)
        self._forget_if_invalid(key, rule)
        bind = self._bind(key, rule, default)
        if widget == "segmented_control":
            chosen = where.segmented_control(label, list(options), default=default, required=True, key=key,
                                             bind=bind, **kwargs)
        elif widget == "select_slider":
            chosen = where.select_slider(label, options=list(options), value=default, key=key, bind=bind, **kwargs)
        else:  # selectbox, radio
            chosen = getattr(where, widget)(label, options=list(options), index=index, key=key, bind=bind, **kwargs)
        return self.record(key, label, chosen, rule)

    def select_slider(self, label, options: Sequence, value, key, *, where=st, **kwargs):
        return self._choice("select_slider", label, options, value, key, where, kwargs)

    def selectbox(self, label, options: Sequence[str], index: int, key, *, where=st, **kwargs):
        return self._choice("selectbox", label, options, list(options)[index], key, where, kwargs, index)

    def radio(self, label, options: Sequence[str], index: int, key, *, where=st, **kwargs):
        return self._choice("radio", label, options, list(options)[index], key, where, kwargs, index)

    def segmented_control(self, label, options: Sequence, default, key, *, where=st, **kwargs):
        return self._choice("segmented_control", label, options, default, key, where, kwargs)

    def toggle(self, label, value: bool, key, *, where=st, **kwargs):
        rule = Flag()
        if where is NOWHERE:
            return self._unseen(key, value, rule)
        self._forget_if_invalid(key, rule)
        chosen = where.toggle(label, value=value, key=key, bind=self._bind(key, rule, value), **kwargs)
        return self.record(key, label, chosen, rule)

    def text_area(self, label, value: str, key, max_chars: int, *, where=st, **kwargs):
        rule = Text(max_chars)
        if where is NOWHERE:
            return self._unseen(key, value, rule)
        self._forget_if_invalid(key, rule)
        chosen = where.text_area(label, value=value, key=key, max_chars=max_chars,
                                 bind=self._bind(key, rule, value), **kwargs)
        return self.record(key, label, chosen, rule)

    def report(self, later: Sequence[str] = (), only: Sequence[str] | None = None) -> None:
        """Show one note listing every link value that was ignored, if any.  `later`: keys of controls
        the page makes after this report in runs where it stops early (a section's own controls, drawn
        with the section once a lesson step is revealed): not called unknown, nor are the keys `put_off`.
        `only`: the note for these keys alone (a put-off section's, under it, once it made them)."""
        waiting = set(later) | (self._put_off if only is None else set())
        lines = []
        for key, raw in list(self._requested.items()):
            if only is not None and key not in only:
                continue
            if key in waiting and key not in self._controls:
                continue  # still pending: the run that makes the control reports it
            del self._requested[key]
            if key not in self._controls:
                why = "does not apply with the other settings shown" if key in self._known else \
                    "is not a setting of this page"
                lines.append(f"{quoted(key)} {why}, so it was ignored.")
                continue
            label, value, rule = self._controls[key]
            why = self._unusable.pop(key, None)
            wanted = self._wanted.pop(key, value)
            if why is None and not _same(value, wanted):  # the rule took it, Streamlit did not
                why = f"is not valid here ({rule.allowed})"
            if why is not None:
                lines.append(f"**{escape_markdown(label)}**: {quoted(', '.join(raw))} {escape_markdown(why)}; "
                             f"showing {quoted(rule.text(value))} instead.")
        lines += self._notes if only is None else []
        if lines:
            st.info("Some settings could not be used:\n\n" + "\n".join(f"- {line}" for line in lines),
                    icon=":material/link_off:")


def vega_lite_spec(chart) -> dict:
    """An Altair chart's Vega-Lite dict, unvalidated, with its inline datasets (rows) as Arrow bytes.
    Streamlit sends each dataset as Arrow and converts rows to it at every draw (most of a drawn
    chart's cost); converted once, with Streamlit's own function, a cached spec's data is passed on
    as it is."""
    spec = vega_inked(chart.to_dict(validate=False))
    for dataset, rows in spec.get("datasets", {}).items():
        spec["datasets"][dataset] = arrow_bytes(rows)
    return spec


def altair_chart(spec: dict, *, where=st, key: str | None = None) -> None:
    """Draw a chart's Vega-Lite dict as `vega_lite_spec` made it (the lesson runtime makes it once per
    setting), its fonts raised when presenting.  st.altair_chart's schema validation, which would run
    for every chart on every rerun, is skipped: the builders are validated once, by the unit tests."""
    if presenting():
        from ..figures.presentation import enlarge_vega_lite

        spec = enlarge_vega_lite(spec)
    where.vega_lite_chart(spec, width="stretch", key=key)
    chart_sent()


def download_csv(filename: str, label: str, make_csv: Callable[..., str], *args, where=st, key=None,
                 **kwargs) -> None:
    """A download button for the CSV text `make_csv(*args, **kwargs)`, made only when the button is
    clicked (Streamlit's deferred data), so a rerun does not pay for files nobody downloads.  The
    arguments are bound now, so later assignments in the page cannot change what is downloaded."""
    where.download_button(label, data=functools.partial(_encoded, make_csv, *args, **kwargs), file_name=filename,
                          mime="text/csv", icon=":material/download:", key=key, on_click="ignore")


def _encoded(make_text: Callable[..., str], *args, **kwargs) -> bytes:
    return make_text(*args, **kwargs).encode()
