"""What a lesson's page script draws with, in one place: its sections and buttons, charts drawn as the
kit draws them (presentation fonts, the first chart's hook, data sent once per setting), the lesson's
prose, claims read from what is shown, and the text helpers.

    from explorer.kit.draw import Section, altair_chart, lesson_text, plotly_chart
    from explorer.serve.adapter import serve_lesson
"""

from .controls import altair_chart, download_csv
from .present import plotly_chart, presenting
from .prose import lesson_text
from .sections import Button, Preset, Section, claimed, measured_box
from .text import counted, escape_markdown, quoted
from .widgets import preset_buttons

__all__ = ["Button", "Preset", "Section", "altair_chart", "claimed", "counted", "download_csv", "escape_markdown",
           "lesson_text", "measured_box", "plotly_chart", "presenting", "preset_buttons", "quoted"]
