"""What a task read of a user's text: kept apart from the tasks so the tasks module stays about data."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["OWN_TEXT", "ParsedInput"]

OWN_TEXT = "your own text…"  # the option of a preset picker that opens a text box


@dataclass(frozen=True)
class ParsedInput:
    """What the user typed, as the task's tokens.  `unknown` were dropped; `cut` beyond max; `markers`
    (<s>, </s>, <pad>) dropped: the model adds its own."""

    tokens: tuple[str, ...]
    unknown: tuple[str, ...]
    cut: int
    markers: tuple[str, ...] = ()

    @property
    def problems(self) -> list[str]:
        notes = []
        if self.unknown:
            shown = ", ".join(f"'{u[:15]}'" for u in self.unknown[:8])
            more = f" and {len(self.unknown) - 8} more" if len(self.unknown) > 8 else ""
            notes.append(f"not in this model's vocabulary, so left out: {shown}{more}")
        if self.markers:
            shown = ", ".join(f"'{m}'" for m in dict.fromkeys(self.markers))
            notes.append(f"markers the model places itself, so left out of the input: {shown}")
        if self.cut:
            notes.append(f"the input was longer than this model allows; the last {self.cut} tokens were left out")
        return notes
