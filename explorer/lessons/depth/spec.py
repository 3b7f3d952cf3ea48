"""The depth lesson on the runtime."""

from explorer.kit.spec import LessonSpec

from .figures import depth_figures
from .view import DEPTH_CLAIMS, DepthSettings, depth_view

DEPTH = LessonSpec("depth", DepthSettings, depth_view, depth_figures, claims=DEPTH_CLAIMS)
SPECS = (DEPTH,)
