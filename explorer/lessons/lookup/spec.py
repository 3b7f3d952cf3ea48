"""The lookup lesson on the runtime."""

from explorer.kit.spec import LessonSpec

from .figures import lookup_figures
from .view import LOOKUP_CLAIMS, LookupSettings, lookup_view

LOOKUP = LessonSpec("lookup", LookupSettings, lookup_view, lookup_figures, claims=LOOKUP_CLAIMS)
SPECS = (LOOKUP,)
