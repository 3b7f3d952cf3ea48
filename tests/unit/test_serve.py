"""The lesson runtime (explorer/serve): declarations, the one cache, the warm-up, the adapter."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass

import pytest

from explorer.serve import runtime
from explorer.serve.adapter import sendable, warm_lessons
from explorer.serve.lessons import LESSONS
from explorer.views.settings import check, controls_of, setting
from tests.support.apptest import run_page

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.page)
def test_warming_computes_every_lesson_default_and_its_page_then_computes_nothing(lesson):
    runtime._shown.cache_clear()
    assert set(warm_lessons()) == {spec.page for spec in LESSONS}
    misses = runtime._shown.cache_info().misses
    at = run_page(f"app_pages/{lesson.page}.py")
    assert not at.exception and not at.info
    assert runtime._shown.cache_info().misses == misses, "the page found its default view warmed"


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.page)
def test_a_lesson_is_a_frozen_settings_dataclass_whose_every_field_is_a_bounded_control(lesson):
    defaults = lesson.settings()
    check(defaults)
    with pytest.raises(FrozenInstanceError):
        defaults.__setattr__(controls_of(lesson.settings)[0][0], 0)
    urls = [control.url for _, control in controls_of(lesson.settings)]
    assert len(urls) == len(set(urls)) == len(vars(defaults))
    shown = runtime.shown(lesson, defaults, sendable)
    assert shown is runtime.shown(lesson, lesson.settings(), sendable)  # one cache, keyed by the settings


def test_settings_outside_their_controls_are_refused():
    @dataclass(frozen=True)
    class Probe:
        n: int = setting(2, "N", url="n", bounds=(1, 4, 1))
        kind: str = setting("a", "Kind", url="kind", options=("a", "b"))

    check(Probe(4, "b"))
    for wrong in (Probe(5, "a"), Probe(0, "a"), Probe(2, "c"), Probe(True, "a")):
        with pytest.raises(ValueError, match="outside their controls"):
            check(wrong)
    with pytest.raises(ValueError, match="default"):
        setting(9, "N", url="n", bounds=(1, 4, 1))
    with pytest.raises(ValueError, match="bounds or options"):
        setting(1, "N", url="n")
