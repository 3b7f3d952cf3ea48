"""explorer/serve/memory.py: freed memory goes back to the system; what is kept stays."""

from __future__ import annotations

import pytest

from explorer.serve import memory

CHUNK = 64 * 1024  # under malloc's mmap threshold: taken from the heap, not mapped on its own
CHUNKS = 2400  # ~157 MB


@pytest.mark.skipif(not memory.enabled(), reason="needs glibc's malloc_trim (Linux)")
def test_holes_left_by_freed_temporaries_are_given_back():
    """Temporaries freed between objects that stay (a cache, a model) leave holes malloc keeps; a
    release returns them, and the objects kept are intact."""
    memory.release()
    start = memory.resident_mb()
    kept, temporaries = [], []
    for i in range(CHUNKS):
        temporaries.append(bytes([i % 251]) * CHUNK)
        kept.append(bytes([i % 13]) * 600)  # a small survivor after each: the holes are not at the top
    grown = memory.resident_mb()
    assert grown - start > 100
    del temporaries
    held = memory.resident_mb()
    assert held - start > 100, "malloc kept the freed chunks (what this module is for)"
    assert memory.release()
    assert memory.resident_mb() < held - 100
    assert all(k == bytes([i % 13]) * 600 for i, k in enumerate(kept))


def test_the_releaser_gives_back_only_after_the_process_grew():
    sizes = [500.0]

    def give_back():  # a release returns what malloc held free
        sizes.append(sizes[-1] - 80)
        return True

    releaser = memory.Releaser(period_s=60, slack_mb=64, size=lambda: sizes[-1], give_back=give_back)
    assert not releaser.check() and releaser.releases == 0  # no growth
    sizes.append(560.0)
    assert not releaser.check()  # within the slack
    sizes.append(700.0)
    assert releaser.check() and releaser.releases == 1 and releaser.released_at == 620.0
    sizes.append(680.0)  # measured from the size after the release
    assert not releaser.check()
    sizes.append(690.0)
    assert releaser.check() and releaser.releases == 2


def test_turned_off_it_releases_nothing_and_starts_no_thread(monkeypatch):
    monkeypatch.setenv("EXPLORER_TRIM", "0")
    assert not memory.enabled()
    assert memory.release() is False
    assert memory.keep_released() is None


def test_the_resident_size_is_read():
    assert memory.resident_mb() > 10
