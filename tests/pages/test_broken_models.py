"""Missing or damaged files in pretrained/: the views that need them say what is wrong and how to
regenerate it; every page still runs; pages that need no model are not affected.

The real pretrained/ folder is never touched: each test copies it to a temporary folder, damages
the copy, and points the loader at the copy (explorer.pretrained.PRETRAINED_DIR and the loader's
directory), with every cache of the explorer package cleared before and after.  Which models a
page loads is not listed by hand: it is recorded by running every page of the catalog once.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import explorer.training.pretrained as pretrained
from explorer.serve import runtime
from explorer.serve.catalog import PAGES
from tests.pages.test_hostile_input import run as run_page

REGENERATE = "python -m explorer.training.train"


def clear_caches() -> None:
    """Every cache of the library (explorer.caching's, listed by the runtime): the loaded models,
    the views computed from them, and the runtime's one cache."""
    runtime.clear()


class Copy:
    """A private copy of pretrained/ (`path`) and the model names loaded from it (`loaded`)."""

    def __init__(self, path: Path):
        self.path = path
        self.loaded: list[str] = []


@pytest.fixture
def pretrained_copy(tmp_path, monkeypatch):
    """A private copy of pretrained/ that the loader reads instead of the real folder."""
    copy = tmp_path / "pretrained"
    shutil.copytree(pretrained.PRETRAINED_DIR, copy, ignore=shutil.ignore_patterns("*.partial"))
    state = Copy(copy)
    original = pretrained.load_model_uncached

    def load_from_copy(name, directory=None):
        state.loaded.append(name)
        return original(name, copy)

    clear_caches()
    monkeypatch.setattr(pretrained, "PRETRAINED_DIR", copy)
    monkeypatch.setattr(pretrained, "load_model_uncached", load_from_copy)
    yield state
    clear_caches()


def alerts(at) -> str:
    return "\n".join(el.value for kind in ("error", "warning", "info") for el in getattr(at, kind))


def models_by_page(copy: Copy) -> dict[str, set[str]]:
    """Run every page once on the intact copy and record the shipped models it loads."""
    used = {}
    for info in PAGES:
        clear_caches()
        copy.loaded.clear()
        at = run_page(info.path, {})
        assert not at.exception, (info.path, [e.value for e in at.exception])
        used[info.path] = set(copy.loaded)
    return used


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: max(1, path.stat().st_size // 2)])


def flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


DAMAGE = {
    "weights truncated": lambda d, n: truncate(d / f"{n}.safetensors"),
    "weights changed": lambda d, n: flip_a_byte(d / f"{n}.safetensors"),
    "weights missing": lambda d, n: (d / f"{n}.safetensors").unlink(),
    "card missing": lambda d, n: (d / f"{n}.json").unlink(),
    "card not JSON": lambda d, n: (d / f"{n}.json").write_text("{ this is not json"),
}


def check_reported(at, page: str, name: str) -> None:
    text = alerts(at)
    assert f"{name}." in text and f"{REGENERATE} {name}" in text, (
        f"{page} needs {name}, which is damaged, but does not say so with the command to regenerate it:\n{text}")


def test_every_model_damaged_every_page_still_runs_and_says_what_to_regenerate(pretrained_copy):
    used = models_by_page(pretrained_copy)
    assert any(used.values()), "no page loaded a shipped model: nothing to test"
    names = sorted({n for names in used.values() for n in names})
    kinds = list(DAMAGE)
    for i, name in enumerate(names):  # every kind of damage, spread over the models
        if all((pretrained_copy.path / f"{name}{ext}").exists() for ext in (".json", ".safetensors")):
            DAMAGE[kinds[i % len(kinds)]](pretrained_copy.path, name)
        # else: already missing from the shipped folder (e.g. still being trained): damaged by nature
    for info in PAGES:
        clear_caches()
        at = run_page(info.path, {})
        assert not at.exception, (info.path, [e.value for e in at.exception])
        for name in used[info.path]:
            check_reported(at, info.path, name)
        if not used[info.path]:
            assert REGENERATE not in alerts(at), f"{info.path} loads no model but reports one:\n{alerts(at)}"


def test_one_damaged_model_affects_only_the_views_that_use_it(pretrained_copy):
    used = models_by_page(pretrained_copy)
    counts = {}
    for names in used.values():
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    assert counts, "no page loaded a shipped model: nothing to test"
    shipped = [n for n in sorted(counts) if (pretrained_copy.path / f"{n}.safetensors").exists()]
    assert shipped, "none of the models the pages use is shipped"
    victim = max(shipped, key=counts.get)  # the shipped model most pages use
    truncate(pretrained_copy.path / f"{victim}.safetensors")
    for info in PAGES:
        clear_caches()
        at = run_page(info.path, {})
        assert not at.exception, (info.path, [e.value for e in at.exception])
        if victim in used[info.path]:
            check_reported(at, info.path, victim)
        else:
            assert victim not in alerts(at), f"{info.path} does not use {victim} but reports it:\n{alerts(at)}"
