"""The library's layers import one way, and each lesson is a folder no other lesson reaches into.

    model ← training ← analysis          (each may import the layers to its left)
    figures                              handed data: imports no other layer
    kit                                  the lesson kit: may import model, training, analysis and figures;
                                         never a lesson, never the server.  Its declarations (spec,
                                         settings, claims, measured boxes) and its plain helpers (links,
                                         text, the first chart's hook) use no Streamlit; the rest draws
                                         a page with Streamlit (controls, steps, prose, present mode,
                                         sections; draw.py gathers what a page script uses)
    lessons/<name>/                      one lesson: may use model, training, analysis, figures and the
                                         kit's declarations; its page script (<name>.py) alone uses
                                         Streamlit, the kit's drawing and the server (serve_lesson); it
                                         never imports another lesson
    lessons/__init__.py                  the registry: finds the folders, imports none of them by name
    serve                                the server and the only other Streamlit code: may use every
                                         layer but the lessons, which it reaches only through the
                                         registry (it names no lesson)

app_pages/home.py and app.py may import anything.  Streamlit's non-public modules (anything but
`streamlit` itself) are imported by one file alone, explorer/kit/internals.py, which
tests/unit/test_streamlit_internals.py pins.
Every cache is made by explorer/caching.py (a foundation every layer may import; it imports none),
which lists them for the runtime: no other cache mechanism anywhere (functools' caches, Streamlit's),
but the runtime's use of st.cache_resource for what runs once per server (explorer/serve).
Heavy work is cut into pieces with explorer/pieces.py (the other foundation); where the pieces run is
the runtime's work pool (explorer/serve/pool.py): the layers below it start no thread of their own
(but training, which runs the live lesson's jobs in a process of their own).
Every import counts, also one inside a function.  Files are as long as their one idea needs: no cap
on a file's length, but a function stays short enough to read at once.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from harness.apptest import ROOT

LAYERS = ("model", "training", "analysis", "kit", "figures", "lessons", "serve")
ALLOWED = {
    "model": set(),
    "training": {"model"},
    "analysis": {"model", "training"},
    "kit": {"model", "training", "analysis", "figures"},
    "figures": set(),
    "lessons": {"model", "training", "analysis", "kit", "figures", "serve"},
    "serve": {"model", "training", "analysis", "kit", "figures", "lessons"},
}
STREAMLIT_ALLOWED = {"serve", "kit", "page script"}
PRIVATE_STREAMLIT_ALLOWED = ROOT / "explorer" / "kit" / "internals.py"
# The kit's modules that a lesson's views, claims and boxes may use: no Streamlit in them or below them.
KIT_DECLARATIONS = {"spec", "settings", "claims", "measured", "links", "text", "first_chart"}
PLOTTING = ("plotly", "altair")
PLOTTING_ALLOWED = {"figures", "figures.py", "charts.py", "serve/adapter.py", "kit/present.py"}
MAX_FUNCTION_LINES = 80

LIBRARY = sorted((ROOT / "explorer").rglob("*.py"))
CACHING = ROOT / "explorer" / "caching.py"
FOUNDATIONS = {CACHING, ROOT / "explorer" / "pieces.py"}  # every layer may import them; they import none
CONCURRENCY_ALLOWED = {"serve", "training"}  # the runtime's pool; the live lesson's training jobs
LESSON_FOLDERS = sorted(p.parent for p in (ROOT / "explorer" / "lessons").glob("*/lesson.toml"))
LESSON_NAMES = {folder.name for folder in LESSON_FOLDERS}
PAGES = sorted([ROOT / "app_pages" / "home.py", *(folder / f"{folder.name}.py" for folder in LESSON_FOLDERS)])


def lesson_of(path: Path) -> str | None:
    """The lesson a file belongs to (its folder's name), or None."""
    parts = path.relative_to(ROOT / "explorer").parts
    return parts[1] if parts[0] == "lessons" and len(parts) > 2 else None


def layer_of(path: Path) -> str | None:
    parts = path.relative_to(ROOT / "explorer").parts
    return parts[0] if len(parts) > 1 else None


def imported_modules(path: Path, source: str | None = None) -> list[tuple[int, str]]:
    """(line, absolute module name) for every import in the file (or in `source`, read as that file),
    relative ones resolved."""
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(ast.parse(path.read_text() if source is None else source, str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            if module in ("explorer", *(f"explorer.{layer}" for layer in LAYERS)):
                found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def test_the_rules_see_every_layer():
    layers = {layer_of(path) for path in LIBRARY} - {None}
    assert layers == set(LAYERS), "a new layer needs its rule here"
    deep = [p for p in LIBRARY if len(p.relative_to(ROOT / "explorer").parts) > (3 if layer_of(p) == "lessons" else 2)]
    assert not deep, f"one level of packages (two in lessons/: a folder per lesson): {deep}"
    assert len(LESSON_FOLDERS) == 12 and all((folder / f"{folder.name}.py").exists() for folder in LESSON_FOLDERS)
    # The resolver itself: a relative import two levels up names the right layer.
    analysis = ROOT / "explorer" / "analysis" / "attention_maps.py"
    assert any(name.startswith("explorer.training") for _, name in imported_modules(analysis))


@pytest.mark.parametrize("path", LIBRARY, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_run_one_way(path: Path):
    if path in FOUNDATIONS:  # no layer of explorer
        assert not [m for _, m in imported_modules(path) if m.split(".")[0] in ("explorer", "streamlit", "torch")]
        return
    wrong = violations(path)
    assert not wrong, "\n".join(wrong)


def violations(path: Path, source: str | None = None) -> list[str]:
    """What the file (or `source`, read as that file) imports against the rules of its layer."""
    layer = layer_of(path)
    if layer is None:  # explorer/__init__.py: the public API, loaded lazily
        return []
    lesson = lesson_of(path)
    wrong = []
    for line, module in imported_modules(path, source):
        parts = module.split(".")
        if parts[0] == "explorer" and len(parts) > 1 and parts[1] in LAYERS:
            if parts[1] != layer and parts[1] not in ALLOWED[layer]:
                wrong.append(f"line {line}: {module} (a {layer} module may import {sorted(ALLOWED[layer])})")
            if parts[1] == "lessons" and len(parts) > 2 and parts[2] in LESSON_NAMES and parts[2] != lesson:
                wrong.append(f"line {line}: {module} names the lesson {parts[2]!r}"
                             + (f" from the lesson {lesson!r}" if lesson else ": only the registry's names may"))
            if parts[1] == "serve" and lesson and path.stem != lesson:
                wrong.append(f"line {line}: {module}: only a lesson's page script (<name>.py) uses the server")
            if parts[1] == "kit" and lesson and path.stem != lesson and parts[2:3] != [] \
                    and parts[2] not in KIT_DECLARATIONS:
                wrong.append(f"line {line}: {module}: a lesson's views use the kit's declarations "
                             f"{sorted(KIT_DECLARATIONS)}; only its page script draws")
            if layer == "kit" and path.stem in KIT_DECLARATIONS and parts[1] == "kit" and parts[2:3] != [] \
                    and parts[2] not in KIT_DECLARATIONS:
                wrong.append(f"line {line}: {module}: the kit's declarations import none of its drawing")
        elif parts[:2] in (["explorer", "caching"], ["explorer", "pieces"]):
            pass  # the foundations: the one cache mechanism, heavy work's pieces
        elif parts[0] == "explorer" and len(parts) > 1:
            wrong.append(f"line {line}: {module} is not a layer of explorer")
        role = ("page script" if path.stem == lesson else path.name) if lesson else layer
        where = {layer, "/".join(path.relative_to(ROOT / "explorer").parts), role}
        declaration = layer == "kit" and path.stem in KIT_DECLARATIONS
        if parts[0] == "streamlit" and (declaration or not where & STREAMLIT_ALLOWED):
            wrong.append(f"line {line}: streamlit outside the server, the kit's drawing and the lessons' page scripts")
        if parts[0] in PLOTTING and not where & PLOTTING_ALLOWED:
            wrong.append(f"line {line}: {parts[0]} outside explorer/figures and the lessons' figures.py, charts.py")
    return wrong


@pytest.mark.parametrize("path", [*LIBRARY, *PAGES], ids=lambda p: str(p.relative_to(ROOT)))
def test_functions_read_at_once(path: Path):
    long = [f"{node.name} (line {node.lineno}): {node.end_lineno - node.lineno + 1} lines"
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def _probe(where: str, source: str):
    """Check `source` as if it were the file explorer/<where> (nothing is written)."""
    wrong = violations(ROOT / "explorer" / where, source)
    assert not wrong, "\n".join(wrong)


def test_rules_catch_a_violation():
    """The checker is not vacuous: a figures module importing a lesson, a lesson importing another, the kit
    importing the server, a lesson's view using Streamlit, and the server naming a lesson are reported."""
    with pytest.raises(AssertionError, match=r"lessons\.attention"):
        _probe("figures/_probe_for_test.py", "from ..lessons.attention import view\n")
    with pytest.raises(AssertionError, match=r"names the lesson 'attention' from the lesson 'depth'"):
        _probe("lessons/depth/_probe_for_test.py", "from explorer.lessons.attention.view import compute_view\n")
    with pytest.raises(AssertionError, match=r"explorer\.serve"):
        _probe("kit/_probe_for_test.py", "from ..serve import runtime\n")
    with pytest.raises(AssertionError, match=r"streamlit outside"):
        _probe("lessons/depth/_probe_for_test.py", "import streamlit\n")
    with pytest.raises(AssertionError, match=r"names the lesson 'depth'"):
        _probe("serve/_probe_for_test.py", "from ..lessons.depth import spec\n")
    with pytest.raises(AssertionError, match=r"only its page script draws"):
        _probe("lessons/depth/_probe_for_test.py", "from explorer.kit.draw import plotly_chart\n")
    with pytest.raises(AssertionError, match=r"streamlit outside"):
        _probe("kit/spec.py", "import streamlit\n")
    with pytest.raises(AssertionError, match=r"declarations import none of its drawing"):
        _probe("kit/settings.py", "from .present import presenting\n")
    _probe("lessons/depth/_probe_for_test.py", "from .view import depth_view\nfrom explorer.kit.claims import Claim\n")
    _probe("lessons/depth/depth.py", "import streamlit\nfrom explorer.kit.draw import plotly_chart\n"
           "from explorer.serve.adapter import serve_lesson\n")


def test_the_registry_names_no_lesson():
    """explorer/lessons/__init__.py finds the folders; no module of the framework names one of them."""
    registry = ROOT / "explorer" / "lessons" / "__init__.py"
    names = {folder.name for folder in LESSON_FOLDERS}
    framework = [registry, *(ROOT / "explorer" / "serve").glob("*.py"), *(ROOT / "explorer" / "kit").glob("*.py"),
                 ROOT / "app.py"]
    named = [f"{path.relative_to(ROOT)}: {module}" for path in framework for _, module in imported_modules(path)
             if module.startswith("explorer.lessons.") and module.split(".")[2] in names]
    assert not named, named


def concurrency(source: str) -> list[str]:
    """What a source uses to run work concurrently: threads, executors, processes, event loops, and
    context variables (how the runtime hands a page run's pieces to its pool)."""
    modules = ("concurrent", "multiprocessing", "asyncio", "contextvars")
    names = ("Thread", "Timer", "ThreadPoolExecutor", "ProcessPoolExecutor", "ContextVar")
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] in modules)
        elif isinstance(node, ast.ImportFrom):
            if (node.module or "").split(".")[0] in modules:
                found.add(node.module)
            found.update(a.name for a in node.names if a.name in names)
        elif isinstance(node, ast.Attribute) and node.attr in names:
            found.add(node.attr)
        elif isinstance(node, ast.Name) and node.id in names:
            found.add(node.id)
    return sorted(found)


@pytest.mark.parametrize("path", [p for p in LIBRARY if layer_of(p) not in (None, *CONCURRENCY_ALLOWED)],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_only_the_runtime_runs_work_concurrently(path: Path):
    """A heavy view cuts its work with explorer.pieces; where the pieces run (threads, a pool, a queue
    fair between sessions) is the runtime's alone (explorer/serve/pool.py)."""
    found = concurrency(path.read_text())
    assert not found, f"{path.relative_to(ROOT)} runs work itself: {found} (cut it with explorer.pieces.piece)"


def test_the_concurrency_rule_catches_a_pool_of_its_own():
    assert concurrency("from concurrent.futures import ThreadPoolExecutor\n") == ["ThreadPoolExecutor",
                                                                                   "concurrent.futures"]
    assert concurrency("import threading\n\nthreading.Thread(target=print).start()\n") == ["Thread"]
    assert concurrency("import threading\n\nLOCK = threading.Lock()\n") == []  # a lock runs nothing
    assert concurrency("from ..pieces import piece\n\npiece(print, 1)\n") == []


def test_no_two_library_files_import_each_other_even_through_others():
    """An import circle (a → b → … → a), also through an import inside a function, makes a reader
    hold both files at once; the model reads top-down, one file building on the next."""
    modules = {".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): p for p in LIBRARY}
    graph = {name: {m for _, m in imported_modules(path) if m in modules and m != name and not m.endswith(".__init__")
                    and m != "explorer"}
             for name, path in modules.items()}
    circles, state = [], {}

    def visit(name: str, path: list[str]) -> None:
        state[name] = "open"
        for other in sorted(graph[name]):
            if state.get(other) == "open":
                circles.append([*path[path.index(other):], other])
            elif other not in state:
                visit(other, [*path, other])
        state[name] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert not circles, "import circles: " + "; ".join(" → ".join(c) for c in circles)


APP_FILES = sorted([ROOT / "app.py", *PAGES, *LIBRARY, *(ROOT / "deploy").glob("*.py")])


@pytest.mark.parametrize("path", APP_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_only_the_internals_module_imports_private_streamlit(path: Path):
    """`import streamlit` is public; `streamlit.<anything>` is not (its modules move between releases)."""
    if path == PRIVATE_STREAMLIT_ALLOWED:
        return
    private = [(line, name) for line, name in imported_modules(path) if name.startswith("streamlit.")]
    assert not private, f"Streamlit internals outside explorer/kit/internals.py: {private}"


# What only the lesson runtime (explorer/serve) does: caching, deferred drawing, fragments, warm-up.
PAGE_TRICKS = ("cache_resource", "cache_data", "lru_cache", "functools.cache", "bounded_cache", "SingleFlight",
               "fragment", "below_the_fold", "put_off", "warm")


def page_tricks(source: str, tricks: tuple[str, ...] = PAGE_TRICKS) -> list[str]:
    """What of `tricks` a source names (attributes, names, imported modules and names)."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(alias.name for alias in node.names)
            names.add(getattr(node, "module", None) or "")
    return sorted(t for t in tricks if any(t == n or t in n.split(".") for n in names))


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_a_page_is_a_declaration_with_no_cache_and_no_performance_trick(path: Path):
    """A lesson page holds its sections and its prose: the runtime caches, defers and warms."""
    found = page_tricks(path.read_text())
    assert not found, f"{path.name} does what the runtime owns: {found}"


def test_the_page_rule_catches_a_cache():
    assert page_tricks("import streamlit as st\n\n@st.cache_data\ndef f():\n    return 1\n") == ["cache_data"]
    assert page_tricks("from functools import lru_cache\n") == ["lru_cache"]
    assert page_tricks("from explorer.serve.later import below_the_fold\n") == ["below_the_fold"]


# Cache mechanisms other than explorer.caching's (functools', Streamlit's, a hand-made single flight).
OTHER_CACHES = ("lru_cache", "functools.cache", "cached_property", "cache_data", "cache_resource", "SingleFlight")


def other_caches(source: str) -> list[str]:
    found = page_tricks(source, OTHER_CACHES)
    tree = ast.parse(source)
    if any(isinstance(n, ast.ImportFrom) and n.module == "functools" and any(a.name == "cache" for a in n.names)
           for n in ast.walk(tree)):
        found.append("functools.cache")
    return sorted(set(found))


@pytest.mark.parametrize("path", APP_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_cache_is_made_by_the_one_cache_module(path: Path):
    """A newcomer learns one cache: explorer.caching's (bounded_cache for results, loaded for shipped
    files), which the runtime lists, budgets and clears; the runtime alone keeps what runs once per
    server in st.cache_resource."""
    if path == CACHING:
        return
    in_runtime = path.is_relative_to(ROOT / "explorer" / "serve")
    allowed = {"cache_resource"} if in_runtime else set()
    found = [name for name in other_caches(path.read_text()) if name not in allowed]
    assert not found, f"{path.relative_to(ROOT)}: a cache outside explorer.caching: {found}"


def test_the_cache_rule_catches_one():
    lru = "import functools\n\n@functools.lru_cache(maxsize=2)\ndef f(x):\n    return x\n"
    assert other_caches(lru) == ["lru_cache"]
    assert other_caches("from functools import cache\n") == ["functools.cache"]
    assert other_caches("import streamlit as st\n\n@st.cache_resource\ndef f():\n    return 1\n") == ["cache_resource"]
    assert other_caches("from explorer.caching import bounded_cache, loaded\n") == []


def _imports_of_tree(folder: Path) -> list[tuple[Path, int, str]]:
    return [(path, line, module) for path in sorted(folder.rglob("*.py")) for line, module in imported_modules(path)]


def test_benchmarks_use_the_harness_not_the_tests():
    """What benchmarks and tests share is the top-level harness/; benchmarks import no test module."""
    wrong = [f"{p.relative_to(ROOT)}:{line} imports {m}" for p, line, m in _imports_of_tree(ROOT / "benchmarks")
             if m == "tests" or m.startswith("tests.")]
    assert not wrong, "\n".join(wrong)


def test_the_app_imports_no_harness_and_no_test():
    """The app (explorer/, app_pages/, app.py) ships without harness/, tests/ and benchmarks/ (.dockerignore)."""
    shipped = [*_imports_of_tree(ROOT / "explorer"), *_imports_of_tree(ROOT / "app_pages"),
               *((ROOT / "app.py", line, m) for line, m in imported_modules(ROOT / "app.py"))]
    assert len(shipped) > 100
    wrong = [f"{p.relative_to(ROOT)}:{line} imports {m}" for p, line, m in shipped
             if m.split(".")[0] in ("harness", "tests", "benchmarks")]
    assert not wrong, "\n".join(wrong)
    assert "harness" in (ROOT / ".dockerignore").read_text().split()


def test_the_kit_reads_the_lessons_folder_the_registry_finds():
    """The kit reads a lesson's steps and prose from explorer/lessons without importing the registry."""
    from explorer.kit.spec import LESSON_FOLDER
    from explorer.lessons import FOLDER

    assert LESSON_FOLDER == FOLDER
