"""The lesson kit: what a lesson declares itself with, and nothing of any one lesson.

    spec.py      LessonSpec (settings, view, figures, claims) and LiveSpec (a lesson that trains)
    settings.py  a lesson's settings dataclass, whose fields are its controls
    claims.py    claims: when a sentence about a figure holds, and the numbers it quotes
    measured.py  a "claim, measured" box: a statement of the notes beside the number that tests it

It imports no lesson (explorer/lessons) and no server code (explorer/serve), and no Streamlit."""
