"""Counting Streamlit's script runs in a real browser, for the browser tests and the browser benchmarks.

Installed into every page before Streamlit's own code (`add_init_script`), `RUN_TRACKER_JS` keeps
`window.__stRunsDone`, the number of script runs (whole page or fragment) the server has reported
finished, and `window.__stLastChange`, when the page last changed.

A run is counted from the wire: the server ends every run with a `ForwardMsg` whose `script_finished`
field is set, and the tracker reads the top-level fields of every message the page's websocket
receives.  The `data-test-script-state` attribute of [data-testid="stApp"] is not enough: when a run
is short, the frontend may take in its start and its end before React draws again, and the attribute
never shows "running" (seen in CI: the clicker's press opened step 1, and a test waited 30 s for a
run it had missed).  The field number is read from Streamlit's own protocol description, so an upgrade
that renumbers it cannot make the counter silently wrong.
"""

from __future__ import annotations

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

SCRIPT_FINISHED_FIELD = ForwardMsg.DESCRIPTOR.fields_by_name["script_finished"].number

RUN_TRACKER_JS = """
(() => {
  window.__stRunsDone = 0;
  window.__stLastChange = performance.now();
  const changed = () => { window.__stLastChange = performance.now(); };

  // Does this ForwardMsg (protobuf bytes) carry script_finished?  Only its top-level fields are read.
  const finishes = (bytes) => {
    let i = 0;
    const varint = () => {
      let value = 0, scale = 1, byte;
      do { byte = bytes[i++]; value += (byte & 0x7f) * scale; scale *= 128; } while (byte & 0x80 && i < bytes.length);
      return value;
    };
    while (i < bytes.length) {
      const tag = varint(), field = Math.floor(tag / 8), wire = tag % 8;
      if (field === SCRIPT_FINISHED_FIELD && wire === 0) return true;
      if (wire === 0) varint();
      else if (wire === 2) { const length = varint(); i += length; }  // not `i += varint()`: i is read first
      else if (wire === 1) i += 8;
      else if (wire === 5) i += 4;
      else return false;
    }
    return false;
  };
  const count = (buffer) => { if (finishes(new Uint8Array(buffer))) { window.__stRunsDone += 1; changed(); } };
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        if (event.data instanceof ArrayBuffer) count(event.data);
        else if (event.data instanceof Blob) event.data.arrayBuffer().then(count);
      });
    }
  };

  const observer = new MutationObserver(changed);
  const start = () => observer.observe(document.documentElement, {
    subtree: true, childList: true, attributes: true, attributeFilter: ["data-test-script-state"],
  });
  if (document.documentElement) start(); else document.addEventListener("DOMContentLoaded", start);
})();
""".replace("SCRIPT_FINISHED_FIELD", str(SCRIPT_FINISHED_FIELD))
