"""benchmarks/ holds one report, generated; measured times live there, not in the code's comments.

* benchmarks/RESULTS.md is the only markdown file there and results.json the only raw file: findings
  are text that benchmarks/report.py writes beside the numbers, and `--quick` writes elsewhere.
* RESULTS.md is exactly what report.py renders from results.json (after a change to the report:
  `python -m benchmarks.report`), so no number in it was typed by hand.
* No comment or docstring in explorer/, app_pages/ or app.py states a measured time ("12 ms",
  "3× faster"): such figures go stale in code; the benchmark phases measure them.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from pathlib import Path

import pytest

from harness.apptest import ROOT

BENCHMARKS = ROOT / "benchmarks"
CODE = sorted([ROOT / "app.py", *(ROOT / "explorer").rglob("*.py"), *(ROOT / "app_pages").rglob("*.py")])
MEASURED_TIME = re.compile(r"\d(?:[\d.,_]*\d)?\s?(?:[–-]\s?\d[\d.]*\s?)?(?:ms|µs|us|milliseconds?)\b"
                           r"|\d(?:\.\d+)?\s?[×x]\s(?:faster|slower)\b", re.IGNORECASE)


def prose(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring in a Python source."""
    found = [(tok.start[0], tok.string) for tok in tokenize.generate_tokens(io.StringIO(source).readline)
             if tok.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.body:
            doc = ast.get_docstring(node, clean=False)
            if doc:
                found += [(node.body[0].lineno + i, line) for i, line in enumerate(doc.splitlines())]
    return found


def measured_times(source: str) -> list[str]:
    return [f"line {line}: {text.strip()}" for line, text in prose(source) if MEASURED_TIME.search(text)]


def test_benchmarks_hold_one_report_and_its_raw_numbers():
    reports = sorted(p.name for p in BENCHMARKS.glob("*.md"))
    raw = sorted(p.name for p in BENCHMARKS.glob("*.json"))
    assert reports == ["RESULTS.md"], (f"benchmarks/ holds {reports}: findings are text benchmarks/report.py writes "
                                       "next to the numbers, in RESULTS.md")
    assert raw == ["results.json"], f"benchmarks/ holds {raw}: a phase's numbers go into results.json"


def test_results_md_is_rendered_from_results_json():
    from benchmarks.report import render

    rendered = render(json.loads((BENCHMARKS / "results.json").read_text()))
    assert rendered == (BENCHMARKS / "RESULTS.md").read_text(), \
        "RESULTS.md differs from what report.py renders from results.json: run `python -m benchmarks.report`"


def test_the_report_renders_with_any_phase_missing():
    from benchmarks.report import render

    data = json.loads((BENCHMARKS / "results.json").read_text())
    text = render({**data, "phases": {}})
    assert "## Earlier reports" in text and "## Targets" not in text
    for name in data["phases"]:
        assert render({**data, "phases": {name: data["phases"][name]}})
    failed = {name: {**entry, "result": {"error": "RuntimeError: boom"}} for name, entry in data["phases"].items()}
    assert "Failed: RuntimeError: boom" in render({**data, "phases": failed})


@pytest.mark.parametrize("path", CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_measured_time_in_code_comments(path: Path):
    found = measured_times(path.read_text())
    assert not found, (f"{path.relative_to(ROOT)} states measured times in comments: {found}. Say what is done "
                       "and why; the figure belongs to a benchmark phase (benchmarks/RESULTS.md)")


def test_the_comment_rule_catches_a_measured_time():
    source = ('"""Fast: about 75 ms a rerun."""\n\n'
              'x = 1  # building it costs 20–150 ms\n'
              'def f():\n    """Cached, 3× faster."""\n    # 450 µs a call\n')
    assert sorted(line.split(":")[0] for line in measured_times(source)) == ["line 1", "line 3", "line 5", "line 6"]
    assert not measured_times("TIMEOUT_MS = 250  # the browser's debounce, a setting\n"
                              "# polls every 0.2 s; 12 heads × 4 layers\n")
