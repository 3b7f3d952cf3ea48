"""The length lesson's "claim, measured" box of the published maximum lengths (explorer.kit.measured)."""

from __future__ import annotations

from explorer.analysis.claims import PUBLISHED_LENGTHS
from explorer.kit.measured import Measured

__all__ = ["published_lengths"]


def published_lengths() -> Measured:
    rows = tuple((p.model, "none built in" if p.positions is None else p.positions, p.what, p.source)
                 for p in PUBLISHED_LENGTHS)
    fixed = [p for p in PUBLISHED_LENGTHS if p.positions is not None]
    finding = ("A maximum length comes from how positions are encoded or from the length trained on: "
               + "; ".join(f"{p.model}: {p.positions}" for p in fixed)
               + ". The original transformer's sinusoids have no built-in maximum.")
    return Measured("The maximum lengths, as published",
                    "The notes say the original transformer's maximum was 512 tokens and GPT-3's 2048, and that a "
                    "transformer's fixed number of parallel units limits the length.",
                    ("model", "maximum positions", "why", "source"), rows, finding)
