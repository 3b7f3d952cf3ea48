"""A minimal client of Streamlit's websocket protocol, for benchmarks and load tests.

It does what the browser does, and nothing more: open `/_stcore/stream` with the "streamlit"
subprotocol, send a `BackMsg` with `rerun_script` (the query string, the page, every widget value
it has set, and the hashes of the large messages it has cached, like the browser's message cache),
then read `ForwardMsg` frames until `script_finished`.  One rerun's latency is the time from the
rerun request being written to the `script_finished` frame being read; its size is the bytes of
every frame in between.

Widgets are discovered from the deltas of each run (`new_element` with a widget proto); each has
the id the server gave it and, for URL-bound widgets, its `query_param_key`.  `WidgetInfo.states()`
lists the values a widget can take, as `WidgetState` protos ready to send.
"""

from __future__ import annotations

import asyncio
import math
import socket
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.Element_pb2 import Element
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import connect

__all__ = ["RunResult", "Session", "WidgetInfo", "widget_state"]

# Element types that are widgets, and the WidgetState field each one sends (Streamlit 1.67).
WIDGET_VALUE_FIELDS = {
    "slider": "double_array_value",  # select_slider is a Slider proto with options: string_array_value
    "selectbox": "string_value",
    "radio": "string_value",
    "checkbox": "bool_value",  # st.toggle is a Checkbox proto of type TOGGLE
    "text_area": "string_value",
    "text_input": "string_value",
    "number_input": "double_value",
    "multiselect": "string_array_value",
    "button": "trigger_value",
}
RUN_TIMEOUT_S = 60.0  # one script run, first run included


@dataclass
class WidgetInfo:
    """A widget seen in a run: its server id, element type, URL key, and its proto."""

    id: str
    kind: str  # element type: slider, selectbox, radio, checkbox, text_area, button, ...
    key: str  # query_param_key for URL-bound widgets, "" otherwise
    proto: object
    sidebar: bool

    @property
    def is_select_slider(self) -> bool:
        return self.kind == "slider" and len(self.proto.options) > 0

    @property
    def disabled(self) -> bool:
        return bool(getattr(self.proto, "disabled", False))

    def options(self) -> list:
        """Every value the widget can take (sliders: min..max on their step, at most 200 values)."""
        p = self.proto
        if self.kind == "slider":
            if p.options:
                return list(p.options)
            n = round((p.max - p.min) / p.step) if p.step else 0
            stride = max(1, n // 200)
            values = [p.min + i * p.step for i in range(0, n + 1, stride)]
            if values[-1] != p.max:
                values.append(p.max)
            return [round(v, 10) for v in values]
        if self.kind in ("selectbox", "radio"):
            return list(p.options)
        if self.kind == "checkbox":
            return [False, True]
        return []

    def largest(self):
        """The slider's maximum / the last option of a select slider; None for other widgets."""
        if self.kind != "slider":
            return None
        return self.proto.options[-1] if self.proto.options else self.proto.max

    def state(self, value) -> WidgetState:
        return widget_state(self, value)


def url_value(widget: WidgetInfo, value) -> str:
    """The text the browser writes into the address bar for a bound widget's value."""
    if widget.kind == "checkbox":
        return str(bool(value)).lower()
    if widget.kind == "slider" and not widget.is_select_slider:
        number = float(value)
        return str(int(number)) if math.isfinite(number) and number == int(number) else str(number)
    return str(value)


def widget_state(widget: WidgetInfo, value) -> WidgetState:
    """A WidgetState proto setting `widget` to `value`, encoded as the browser encodes it."""
    state = WidgetState(id=widget.id)
    if widget.kind == "slider":
        if widget.is_select_slider:
            state.string_array_value.data.extend([str(value)])
        else:
            state.double_array_value.data.extend([float(value)])
    elif widget.kind in ("selectbox", "radio", "text_area", "text_input"):
        state.string_value = str(value)
    elif widget.kind == "checkbox":
        state.bool_value = bool(value)
    elif widget.kind == "number_input":
        state.double_value = float(value)
    elif widget.kind == "button":
        state.trigger_value = bool(value)
    else:
        raise ValueError(f"cannot set a {widget.kind} widget")
    return state


@dataclass
class RunResult:
    """What one rerun took and produced."""

    seconds: float
    bytes: int
    frames: int
    status: str  # ScriptFinishedStatus name, or "timeout" / "closed"
    largest_frame: int = 0  # bytes of the largest single ForwardMsg (what server.maxMessageSize limits)
    elements: list[tuple[tuple[int, ...], Element | None]] = field(default_factory=list)  # None: a layout block
    exceptions: list[str] = field(default_factory=list)  # text of st.exception boxes (uncaught errors)
    errors: list[str] = field(default_factory=list)  # st.error boxes
    infos: list[str] = field(default_factory=list)  # st.info boxes (the pages' notes)
    page_not_found: bool = False
    first_chart_seconds: float | None = None  # request → the first chart of the main area read (what a user waits for)

    @property
    def ok(self) -> bool:
        return (self.status in ("FINISHED_SUCCESSFULLY", "FINISHED_FRAGMENT_RUN_SUCCESSFULLY") and not self.exceptions
                and not self.page_not_found)


class Session:
    """One browser-like session of a Streamlit app, driven over its websocket.

    `page` is the page's url_path ("" for the default page); `query` the link's query string.
    With `nodelay`, TCP_NODELAY is set on the socket (as browsers do); without it, it is cleared.
    `headers` go with the websocket handshake (e.g. {"Cookie": "ae_worker=w1"}, the class server's
    sticky cookie); the handshake's answer is `handshake_headers` once connected.
    """

    def __init__(self, base_url: str, page: str = "", query: str = "", *, nodelay: bool = True,
                 use_message_cache: bool = True, keep_elements: bool = False, headers: dict | None = None):
        self.ws_url = base_url.replace("http://", "ws://").rstrip("/") + "/_stcore/stream"
        self.page = page
        self.query = query
        self.nodelay = nodelay
        self.use_message_cache = use_message_cache
        self.keep_elements = keep_elements
        self.headers = dict(headers or {})
        self.handshake_headers = None
        self.widgets: dict[str, WidgetInfo] = {}  # id -> widget, from the last run
        self.values: dict[str, WidgetState] = {}  # id -> the value this client set
        self.cache: set[str] = set()  # hashes of cacheable messages received
        self.chart_hashes: set[str] = set()  # those of them that are charts (a cached chart comes as its hash)
        self.page_script_hash = ""
        self.auto_reruns: dict[str, float] = {}  # fragment id -> seconds between its automatic reruns
        self._ws = None

    async def __aenter__(self) -> Session:
        await self.connect()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def connect(self) -> None:
        self._ws = await connect(self.ws_url, subprotocols=["streamlit"], max_size=None, compression=None,
                                 ping_interval=None, open_timeout=20, close_timeout=2,
                                 additional_headers=self.headers or None)
        self.handshake_headers = self._ws.response.headers
        sock = self._ws.transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1 if self.nodelay else 0)

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
            self._ws = None

    @property
    def local_port(self) -> int:
        """This client's end of the connection: its port (how the server's socket for it is found)."""
        return self._ws.transport.get_extra_info("sockname")[1]

    def widget(self, key: str) -> WidgetInfo:
        """The widget bound to URL parameter `key` in the last run."""
        for w in self.widgets.values():
            if w.key == key:
                return w
        raise KeyError(f"no widget with key {key!r}; keys: {sorted(w.key for w in self.widgets.values())}")

    def set(self, widget: WidgetInfo, value) -> None:
        """Set a widget's value for the next rerun, and (for a bound widget) the address bar, as the
        browser does: the server only sends the query string when it corrects a value."""
        self.values[widget.id] = widget.state(value)
        if widget.key:
            params = [(k, v) for k, v in parse_qsl(self.query, keep_blank_values=True) if k != widget.key]
            params.append((widget.key, url_value(widget, value)))
            self.query = urlencode(params)

    async def rerun(self, timeout: float = RUN_TIMEOUT_S, *, fragment_id: str = "") -> RunResult:
        """Request a rerun and read until the script has finished and its output has been sent.

        With `fragment_id`, the automatic rerun of that fragment (`st.fragment(run_every=...)`), as
        the browser's timer sends it; `auto_reruns` holds the fragments the last runs announced."""
        state = ClientState(query_string=self.query, page_name=self.page, page_script_hash=self.page_script_hash,
                            fragment_id=fragment_id, is_auto_rerun=bool(fragment_id))
        state.widget_states.widgets.extend(self.values.values())
        # A button press is sent once, like the browser's trigger.
        self.values = {i: v for i, v in self.values.items() if v.WhichOneof("value") != "trigger_value"}
        if self.use_message_cache:
            state.cached_message_hashes.extend(sorted(self.cache))
        message = BackMsg(rerun_script=state).SerializeToString()
        elements: list[tuple[tuple[int, ...], Element | None]] = []
        widgets: dict[str, WidgetInfo] = {}
        result = RunResult(0.0, 0, 0, "timeout", 0)
        whole_page = not fragment_id
        start = time.perf_counter()
        await self._ws.send(message)
        deadline = start + timeout
        try:
            while True:
                frame = await asyncio.wait_for(self._ws.recv(), max(0.001, deadline - time.perf_counter()))
                result.bytes += len(frame)
                result.frames += 1
                result.largest_frame = max(result.largest_frame, len(frame))
                msg = ForwardMsg()
                msg.ParseFromString(frame)
                kind = msg.WhichOneof("type")
                if msg.hash and msg.metadata.cacheable:
                    self.cache.add(msg.hash)
                if kind in ("delta", "ref_hash") and self._main_chart(msg, kind) and result.first_chart_seconds is None:
                    result.first_chart_seconds = time.perf_counter() - start
                if kind == "delta":
                    delta_kind = msg.delta.WhichOneof("type")
                    if delta_kind == "new_element":
                        self._element(tuple(msg.metadata.delta_path), msg.delta.new_element, widgets, elements,
                                      result)
                    elif delta_kind == "add_block" and self.keep_elements:
                        elements.append((tuple(msg.metadata.delta_path), None))
                elif kind == "page_info_changed":
                    self.query = msg.page_info_changed.query_string
                elif kind == "new_session":
                    self.page_script_hash = msg.new_session.page_script_hash or self.page_script_hash
                    if not msg.metadata.run.fragment_ids:  # a whole-page run: its fragments announce themselves
                        self.auto_reruns = {}
                        whole_page = True  # (a fragment's run may ask for one: a staged opening's follow-up)
                elif kind == "navigation":
                    self.page_script_hash = msg.navigation.page_script_hash or self.page_script_hash
                elif kind == "page_not_found":
                    result.page_not_found = True
                elif kind == "auto_rerun":
                    self.auto_reruns[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
                elif kind == "stop_auto_rerun":
                    for stopped in msg.stop_auto_rerun.fragment_ids:
                        self.auto_reruns.pop(stopped, None)
                elif kind == "script_finished":
                    result.status = ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished)
                    if msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                        break
        except TimeoutError:
            result.status = "timeout"
        except Exception as problem:  # connection closed or broken
            result.status = f"closed: {type(problem).__name__}: {problem}"
        result.seconds = time.perf_counter() - start
        if not whole_page:  # a fragment redraws only its own widgets; the others stay as they were
            self.widgets.update(widgets)
        else:
            self.widgets = widgets
            self.values = {i: v for i, v in self.values.items() if i in widgets}
        if self.keep_elements:
            result.elements = elements
        return result

    async def follow_ups(self, timeout: float = RUN_TIMEOUT_S) -> list[RunResult]:
        """The runs a browser's timers ask for once the page's run is drawn: each announced fragment
        once (a lesson opened sends its sections under the key figure so: explorer/serve/later.py)."""
        return [await self.rerun(timeout, fragment_id=fragment) for fragment in list(self.auto_reruns)]

    async def open(self, timeout: float = RUN_TIMEOUT_S) -> RunResult:
        """The first run and its follow-ups, as one visit: their seconds summed, the first failure's
        status and exceptions kept."""
        result = await self.rerun(timeout)
        for follow_up in await self.follow_ups(timeout):
            result.seconds += follow_up.seconds
            if result.ok and not follow_up.ok:
                result.status, result.exceptions = follow_up.status, follow_up.exceptions
        return result

    def _main_chart(self, msg: ForwardMsg, kind: str) -> bool:
        """Is this message a chart of the main area (its element, or the hash of a cached one)?  Every
        chart's hash is kept, so that its cached copy is known in a later run."""
        path = msg.metadata.delta_path
        if kind == "ref_hash":
            return msg.ref_hash in self.chart_hashes and bool(path) and path[0] == 0
        if msg.delta.WhichOneof("type") != "new_element" or \
                msg.delta.new_element.WhichOneof("type") not in ("plotly_chart", "vega_lite_chart"):
            return False
        if msg.hash:
            self.chart_hashes.add(msg.hash)
        return bool(path) and path[0] == 0

    def _element(self, path, element: Element, widgets, elements, result: RunResult) -> None:
        kind = element.WhichOneof("type")
        if self.keep_elements:
            elements.append((path, element))
        if kind == "exception":
            result.exceptions.append(f"{element.exception.type}: {element.exception.message}")
        elif kind == "alert":
            text = element.alert.body
            fmt = element.alert.format
            # Alert.Format: ERROR = 1, WARNING = 2, INFO = 3, SUCCESS = 4
            if fmt == 1:
                result.errors.append(text)
            elif fmt == 3:
                result.infos.append(text)
        elif kind in WIDGET_VALUE_FIELDS:
            proto = getattr(element, kind)
            key = getattr(proto, "query_param_key", "") or ""
            # delta_path[0]: 0 = main area, 1 = sidebar (RootContainer)
            widgets[proto.id] = WidgetInfo(proto.id, kind, key, proto, sidebar=bool(path) and path[0] == 1)


async def open_session(base_url: str, page: str, query: str = "", **kwargs) -> tuple[Session, RunResult]:
    """Connect and run the page once (the first visit)."""
    session = Session(base_url, page, query, **kwargs)
    await session.connect()
    first = await session.rerun()
    return session, first


def settable(session: Session) -> list[WidgetInfo]:
    """URL-bound widgets a user can change (not buttons, not text, not disabled), in page order."""
    return [w for w in session.widgets.values()
            if w.key and not w.disabled and w.kind in ("slider", "selectbox", "radio", "checkbox")]
