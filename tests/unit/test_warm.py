"""The server's warm-up computes exactly what each lesson page asks for at its defaults: after
`warm_default_views()`, running the pages finds every cached computation already there."""

import pytest

from explorer.views import attention
from explorer.views.warm import warm_default_views
from tests.support.apptest import run_page

pytestmark = pytest.mark.usefixtures("one_thread")

# Lessons not yet on the runtime (explorer/serve warms those: tests/unit/test_serve.py).
PAGES = ["app_pages/attention.py"]


def test_warming_leaves_nothing_for_the_default_pages_to_compute():
    attention.VIEW_CACHE.clear()
    seconds = warm_default_views()
    assert set(seconds) == {"attention"}, "every lesson warmed without error"
    views = len(attention.VIEW_CACHE)
    for page in PAGES:
        run_page(page)
    assert len(attention.VIEW_CACHE) == views, "the attention page's default view was warmed"
