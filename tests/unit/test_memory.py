"""explorer/serve/memory.py: freed memory goes back to the system; what is kept stays."""

from __future__ import annotations

import pytest

from explorer.serve import memory

CHUNK = 64 * 1024  # under malloc's mmap threshold: taken from the heap, not mapped on its own
PAIRS = 1600  # a temporary then a survivor, each CHUNK: ~105 MB of holes between ~105 MB kept


@pytest.mark.skipif(not memory.enabled(), reason="needs glibc's malloc_trim (Linux)")
def test_holes_left_by_freed_temporaries_are_given_back():
    """Temporaries freed between objects that stay (a cache, a model) leave holes malloc keeps; a
    release returns them, and the objects kept are intact.  Survivors as large as the temporaries,
    so that however fragmented the test process's heap already is, they cannot fill old small holes:
    each freed temporary sits between two kept blocks."""
    memory.release()
    start = memory.resident_mb()
    kept, temporaries = [], []
    for i in range(PAIRS):
        temporaries.append(bytes([i % 251]) * CHUNK)
        kept.append(bytes([i % 13]) * CHUNK)
    assert memory.resident_mb() - start > 150
    del temporaries
    held = memory.resident_mb()
    assert held - start > 150, "malloc kept the freed chunks (what this module is for)"
    assert memory.release()
    assert memory.resident_mb() < held - 60
    assert all(k == bytes([i % 13]) * CHUNK for i, k in enumerate(kept))


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
