"""How the cost lesson writes its counts and ratios: one notation for the key figure's labels and the
steps' answers, so every number an answer quotes is printed, as written, in the figure."""

from __future__ import annotations

__all__ = ["count_text", "times_text"]

NBSP = "\u00a0"  # between a number and its unit: never broken over two lines
UNITS = ((10**12, "T"), (10**9, "B"), (10**6, "M"), (10**3, "k"))  # trillion, billion, million, thousand


def count_text(n: int) -> str:
    """A count as read from the back of the room: below 10,000 as it is ("512", "8,320"), from there
    three significant digits and k, M, B or T ("16.6 k", "41.9 M", "2.21 B")."""
    n = int(n)
    if abs(n) < 10_000:
        return f"{n:,}"
    for i, (scale, unit) in enumerate(UNITS):
        if abs(n) >= scale:
            value = float(f"{n / scale:.3g}")
            if abs(value) >= 1000 and i > 0:  # 999,999 rounds to 1,000 k: one unit up
                scale, unit = UNITS[i - 1]
                value = float(f"{n / scale:.3g}")
            digits = 2 if abs(value) < 10 else 1 if abs(value) < 100 else 0
            return f"{value:.{digits}f}{NBSP}{unit}"
    raise AssertionError("unreachable")


def times_text(ratio: float) -> str:
    """A ratio as the answers say it: whole from 10 on or when it is one to two decimals ("10", "3",
    "66"), else to one decimal ("2.0" for 2.03: near 2, not exactly)."""
    if ratio >= 10 or abs(ratio - round(ratio)) < 0.005:
        return f"{ratio:.0f}"
    return f"{ratio:.1f}"
