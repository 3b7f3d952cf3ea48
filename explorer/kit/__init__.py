"""The lesson kit: what a lesson declares itself with and what its page draws with, and nothing of any
one lesson.  It imports no lesson (explorer/lessons) and no server code (explorer/serve).

What a lesson's views, claims and boxes use (no Streamlit):
    spec.py      LessonSpec (settings, view, figures, claims), LiveSpec (a lesson that trains), Shown
    settings.py  a lesson's settings dataclass, whose fields are its controls
    claims.py    claims: when a sentence about a figure holds, and the numbers it quotes
    measured.py  a "claim, measured" box: a statement of the notes beside the number that tests it
    links.py, text.py   reading URL values; escaping and wording of text
    first_chart.py      the hook a chart calls once sent (the server stages a page's first run on it)

What a lesson's page script draws with (Streamlit; draw.py gathers it in one import):
    sections.py  Section, Button, Preset; a claim's sentence and a "claims, measured" box, drawn
    controls.py, widgets.py   URL-bound controls made from the settings (every link value read, bad
                 ones noted), and the charts drawn as Vega-Lite specs made once per setting
    present.py   presentation mode (?present=1) and Plotly charts drawn for it
    steps.py, prose.py   a lesson's steps (lesson.toml) and its text (prose.md), read from its folder
    internals.py every use of Streamlit's non-public modules (tests/unit/test_streamlit_internals.py);
                 the server uses them through this file too
"""
