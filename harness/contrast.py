"""WCAG 2.1 contrast, for the tests that check a colour is readable (tests/unit/test_ink.py,
test_figures_cost.py, test_figures_attention.py); the browser measures rendered text the same way
(tests/browser/test_contrast_browser.py)."""

from __future__ import annotations

__all__ = ["contrast", "luminance"]


def luminance(colour: str) -> float:
    """The relative luminance of '#RRGGBB' (WCAG 2.1)."""
    channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str = "#ffffff") -> float:
    """The contrast ratio of two colours, lighter to darker: 1 (same) to 21 (black on white)."""
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)
