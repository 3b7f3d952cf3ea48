"""Claims, measured: where the lecture notes slip, the app measures the statement on the real modules
beside the lesson's figure.  Each box is what the notes say, a table measured now, and the finding,
its words chosen and its numbers read from that table (claims are code).  A lesson's view holds its
boxes (the runtime caches them with it; each lesson's boxes are in its folder, e.g.
explorer/lessons/cost/boxes.py), and `serve.adapter.measured_box` draws one."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Measured"]


@dataclass(frozen=True)
class Measured:
    """One box: the notes' statement, what was measured (columns and rows), and the finding."""

    title: str
    notes_say: str
    columns: tuple[str, ...]
    rows: tuple[tuple, ...]
    finding: str
