"""Sessions are isolated and small; shared caches are bounded.

* Two sessions of a real `streamlit run app.py` server, on every page with settings, open the same
  page with different values of one control and rerun at the same time, then swap values through
  their widgets (as a user would): each always shows its own view, never the other's.  Driven over
  the websocket protocol by harness/wsclient.py, on 127.0.0.1.
* Per-session state (Streamlit's session_state) of every page stays small.
* Every cache in explorer/ and app_pages/ is bounded (lru_cache with a maxsize, st.cache_* with
  max_entries or ttl): nothing a class of users sets can grow process memory without limit.
* The caches of computed results (explorer/lessons, explorer/analysis) are bounded by bytes as well
  (explorer.caching.bounded_cache with max_bytes); only a load (explorer.caching.loaded) of at most
  SMALL_LRU entries (shipped files, a few results fixed by them) is left bounded by count alone.
* Every cache of the library is listed by explorer.caching, and their byte budgets together fit the
  runtime's RESULT_BUDGET.
"""

from __future__ import annotations

import ast
import asyncio
import pickle

import pytest

from explorer.serve.catalog import PAGES
from harness.apptest import ROOT, run_async
from harness.server import streamlit_server
from harness.wsclient import WIDGET_VALUE_FIELDS, RunResult, Session, settable, url_value
from tests.pages.test_hostile_input import run as run_page

LESSONS_WITH_SETTINGS = [p for p in PAGES if p.url_path]
ROUNDS = 3  # concurrent reruns per phase
CANDIDATE_WIDGETS = 4
SESSION_STATE_LIMIT = 64 * 1024  # bytes, pickled
SMALL_LRU = 8  # entries: a count-bounded cache of results this small needs no byte budget


@pytest.fixture(scope="module")
def server():
    with streamlit_server(name="test-sessions") as running:
        yield running


def fingerprint(result: RunResult) -> list[bytes]:
    """What the run showed, element by element.  Widgets count by kind only: a widget's proto carries
    how its value arrived (from the link or from the user), not just what it shows."""
    shown = []
    for _, element in result.elements:
        if element is None:
            shown.append(b"<block>")
        elif element.WhichOneof("type") in WIDGET_VALUE_FIELDS:
            shown.append(element.WhichOneof("type").encode())
        else:
            shown.append(element.SerializeToString())
    return shown


async def solo(url: str, url_path: str, query: str) -> tuple[list[bytes], list[bytes], Session]:
    """Two runs of one session opened with `query`: their outputs."""
    session = Session(url, url_path, query, keep_elements=True, use_message_cache=False)
    await session.connect()
    try:
        opening = await session.rerun()  # opening the page: its controls and sections come in a follow-up run
        assert opening.ok, (url_path, query, opening.status, opening.exceptions)
        await session.follow_ups()
        first = await session.rerun()
        second = await session.rerun()
        return fingerprint(first), fingerprint(second), session
    finally:
        await session.close()


def stable_difference(a1, a2, b1, b2) -> list[int] | None:
    """Indices of elements that are the same in both runs of A and of B (deterministic output) but
    differ between A and B; None when the runs are not comparable."""
    if not (len(a1) == len(a2) == len(b1) == len(b2)):
        return None
    stable = [i for i in range(len(a1)) if a1[i] == a2[i] and b1[i] == b2[i]]
    return [i for i in stable if a1[i] != b1[i]], stable


async def pick_contrast(url: str, url_path: str):
    """A control and two of its values that give the page two different, deterministic views."""
    probe = Session(url, url_path)
    await probe.connect()
    try:
        assert (await probe.open()).ok  # the opening run and the whole page after it
        candidates = settable(probe)[:CANDIDATE_WIDGETS]
    finally:
        await probe.close()
    for widget in candidates:
        options = widget.options()
        if len(options) < 2:
            continue
        qa = f"{widget.key}={url_value(widget, options[0])}"
        qb = f"{widget.key}={url_value(widget, options[-1])}"
        a1, a2, _ = await solo(url, url_path, qa)
        b1, b2, _ = await solo(url, url_path, qb)
        found = stable_difference(a1, a2, b1, b2)
        if found and found[0]:
            return widget, options[0], options[-1], qa, qb, a1, b1, found[1]
    return None


def same_view(result: RunResult, reference: list[bytes], stable: list[int]) -> bool:
    seen = fingerprint(result)
    return len(seen) == len(reference) and all(seen[i] == reference[i] for i in stable)


async def isolation(url: str, url_path: str) -> str:
    picked = await pick_contrast(url, url_path)
    assert picked, f"{url_path}: no control gives two different deterministic views to compare"
    widget, value_a, value_b, qa, qb, ref_a, ref_b, stable = picked
    a = Session(url, url_path, qa, keep_elements=True, use_message_cache=False)
    b = Session(url, url_path, qb, keep_elements=True, use_message_cache=False)
    await asyncio.gather(a.connect(), b.connect())
    try:
        await asyncio.gather(a.rerun(), b.rerun())  # each opens the page; its sections follow
        await asyncio.gather(a.follow_ups(), b.follow_ups())
        for round_ in range(ROUNDS):
            ra, rb = await asyncio.gather(a.rerun(), b.rerun())
            assert ra.ok and rb.ok, (ra.status, ra.exceptions, rb.status, rb.exceptions)
            assert same_view(ra, ref_a, stable), f"{url_path} round {round_}: session A ({qa}) lost its view"
            assert same_view(rb, ref_b, stable), f"{url_path} round {round_}: session B ({qb}) lost its view"
        # Swap through the widgets, as users would: each now shows what the other showed.
        a.set(a.widget(widget.key), value_b)
        b.set(b.widget(widget.key), value_a)
        for round_ in range(ROUNDS):
            ra, rb = await asyncio.gather(a.rerun(), b.rerun())
            assert ra.ok and rb.ok, (ra.status, ra.exceptions, rb.status, rb.exceptions)
            assert same_view(ra, ref_b, stable), f"{url_path} after swap {round_}: A does not show {value_b!r}"
            assert same_view(rb, ref_a, stable), f"{url_path} after swap {round_}: B does not show {value_a!r}"
    finally:
        await asyncio.gather(a.close(), b.close())
    return f"{widget.key}: {value_a!r} / {value_b!r}, {len(stable)} stable elements"


@pytest.mark.parametrize("info", LESSONS_WITH_SETTINGS, ids=lambda p: p.url_path)
def test_two_sessions_never_see_each_others_state(server, info):
    run_async(isolation(server.url, info.url_path))


@pytest.mark.parametrize("info", PAGES, ids=lambda p: p.url_path or "home")
def test_session_state_is_small(info):
    at = run_page(info.path, {})
    assert not at.exception
    size = sum(len(pickle.dumps(v)) for v in at.session_state.to_dict().values())
    assert size < SESSION_STATE_LIMIT, f"{info.path}: session_state is {size} bytes"


def _decorator_problem(node: ast.expr, takes_arguments: bool) -> str | None:
    """Why a decorator is an unbounded cache, or None.  A cached function without arguments holds
    one entry, so it is bounded whatever the decorator says."""
    if not takes_arguments:
        return None
    call = node if isinstance(node, ast.Call) else None
    target = call.func if call else node
    name = ast.unparse(target)
    keywords = {k.arg: k.value for k in call.keywords} if call else {}
    if name in ("functools.cache", "cache"):
        return "functools.cache has no size limit"
    if name == "bounded_cache" and not (call and "max_bytes" in keywords):
        return "bounded_cache without max_bytes="
    if name in ("functools.lru_cache", "lru_cache") and call:
        size = keywords.get("maxsize", call.args[0] if call.args else None)
        if isinstance(size, ast.Constant) and size.value is None:
            return "lru_cache(maxsize=None) has no size limit"
    streamlit_cache = name in ("st.cache_data", "st.cache_resource", "streamlit.cache_data", "streamlit.cache_resource")
    if streamlit_cache and not ({"max_entries", "ttl"} & set(keywords)):
        return f"{name} without max_entries or ttl"
    return None


def test_every_cache_is_bounded():
    problems = []
    files = sorted((ROOT / "explorer").rglob("*.py")) + sorted((ROOT / "app_pages").glob("*.py")) + [ROOT / "app.py"]
    for path in files:
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                arguments = node.args
                takes_arguments = bool(arguments.args or arguments.posonlyargs or arguments.kwonlyargs
                                       or arguments.vararg or arguments.kwarg)
                for decorator in node.decorator_list:
                    why = _decorator_problem(decorator, takes_arguments)
                    if why:
                        problems.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {why}")
    assert not problems, "unbounded caches:\n" + "\n".join(problems)


def _cached_functions(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (node.args.args or node.args.kwonlyargs):
            for decorator in node.decorator_list:
                call = decorator if isinstance(decorator, ast.Call) else None
                name = ast.unparse(call.func if call else decorator)
                if "cache" in name or name == "loaded":
                    yield node, name, call


def test_computed_results_are_cached_within_a_byte_budget():
    problems = []
    files = sorted((ROOT / "explorer" / "views").glob("*.py")) + sorted((ROOT / "explorer" / "analysis").glob("*.py"))
    for path in files:
        for node, name, call in _cached_functions(path):
            if name == "bounded_cache":
                continue  # max_bytes is checked by test_every_cache_is_bounded
            size = call.keywords[0].value if call and call.keywords else (call.args[0] if call and call.args else None)
            small = isinstance(size, ast.Constant) and isinstance(size.value, int) and size.value <= SMALL_LRU
            if not (name == "loaded" and small):
                problems.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}: {name} is not bounded by bytes "
                                f"(use bounded_cache, or a load of at most {SMALL_LRU} entries)")
    assert not problems, "\n".join(problems)


def _decorated_caches() -> set[str]:
    """module.function of every function the library's source decorates with bounded_cache or loaded."""
    found = set()
    for path in sorted((ROOT / "explorer").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for decorator in node.decorator_list:
                    target = decorator.func if isinstance(decorator, ast.Call) else decorator
                    if ast.unparse(target) in ("bounded_cache", "loaded", "caching.bounded_cache", "caching.loaded"):
                        found.add(f"{module}.{node.name}")
    return found


def test_every_cache_is_listed_and_the_results_fit_the_runtimes_budget():
    """The runtime owns the library's caches: every one is in explorer.caching.CACHES once every
    lesson is loaded, and the byte budgets of the result caches add up to at most RESULT_BUDGET."""
    import importlib

    import explorer.serve.adapter  # noqa: F401  every lesson's view and figures, through LESSONS
    from explorer.serve import runtime

    # and what only a page script imports (gradients' limits box): every lesson module but the page itself,
    # which draws its page when imported (alone, this test missed that cache; in the suite another test loaded it)
    for path in sorted((ROOT / "explorer" / "lessons").glob("*/*.py")):
        if path.stem != path.parent.name:
            importlib.import_module(f"explorer.lessons.{path.parent.name}.{path.stem}")

    listed = [cache for cache in runtime.caches() if cache[0].startswith("explorer.")]  # not tests' own
    names = [name for name, _, _ in listed]
    assert len(names) == len(set(names)), "a cache listed twice"
    decorated = _decorated_caches()
    assert len(decorated) >= 30, "the source scan found the caches"
    assert decorated == set(names), (f"made but not listed: {decorated - set(names)}; "
                                     f"listed, not in the source: {set(names) - decorated}")
    results = [(name, info.max_bytes) for name, kind, info in listed if kind == "result"]
    assert all(budget for _, budget in results), "a result cache without a byte budget"
    total = sum(budget for _, budget in results)
    assert total <= runtime.RESULT_BUDGET, f"{total / 1e6:.0f} MB of result caches > {runtime.RESULT_BUDGET / 1e6} MB"
    assert all(kind == "load" and info.max_bytes is None for _, kind, info in listed if kind != "result")
