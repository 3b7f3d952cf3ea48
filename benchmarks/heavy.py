"""CPU seconds of one uncached rerun of each lesson page at its largest settings (issue #15).

    .venv/bin/python -m benchmarks.heavy [--before REV] [--reps N] [--json PATH]
    (this checkout alone: phase `heavy` of benchmarks/run.py)

Each page runs through streamlit.testing's AppTest at its largest settings, once to load models and
imports, then again with the caches of computed results cleared (explorer.caching's result caches, the
lesson runtime's among them; loaded models are kept): that second run is measured.

* total: process CPU time (every thread) of the uncached rerun;
* piece: the largest piece of work the rerun ran on the runtime's work pool (explorer/serve/pool.py;
  thread CPU time of that piece, on the pool's thread) — the longest the rerun held the pool's
  thread at once (0: none);
* script: total minus the pool pieces — CPU the page's own script thread held.

With --before REV (default: the commit before the work pool, d0248c6) the same measurement runs on
that revision's explorer/ and app_pages/ (extracted with git archive), alternating with the working
tree rep by rep so machine load hits both alike; the median of the reps is printed.  Before the
pool, everything ran on the script thread (piece 0, script = total).  Load average is printed too: the
machine is shared, so compare the two columns of one run, not runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "d0248c6"

# page script → the link of its largest (most expensive) settings
PAGES = {
    "gradients": ("explorer/lessons/gradients/gradients.py",
                           {"T": "512", "width": "64", "init": "orthogonal", "gain": "3.0",
                                             "bptt": "full", "seeds": "5", "dep_T": "64", "dep_kind": "lstm"}),
    # The same, as a user changing a setting finds it: the recall models' evaluation, done once per process
    # (by the warm-up thread at start), is kept.
    "gradients, setting": ("explorer/lessons/gradients/gradients.py",
                           {"T": "512", "width": "64", "init": "orthogonal", "gain": "3.0",
                                                      "bptt": "full", "seeds": "5", "dep_T": "64", "dep_kind": "lstm"}),
    "depth": ("explorer/lessons/depth/depth.py", {"layers": "24", "width": "64", "T": "32", "seeds": "5"}),
    "cost": ("explorer/lessons/cost/cost.py", {"T": "4096", "d": "64", "layers": "24", "time_T": "4096"}),
    "attention": ("explorer/lessons/attention/attention.py",
                  {"task": "reverse", "weights": "random", "heads": "8", "layers": "4",
                                             "compare": "the other weights"}),
    "positions": ("explorer/lessons/positions/positions.py", {"kind": "MiniLM", "positions": "512", "d_model": "384"}),
    "decoder": ("explorer/lessons/decoder/decoder.py", {"task": "induction", "arch_d": "1024", "arch_layers": "12",
                                         "arch_vocab": "50000"}),
    "real": ("explorer/lessons/real/real.py", {}),
    "lookup": ("explorer/lessons/lookup/lookup.py", {"scale": "true", "temperature": "10.0"}),
}


# caches a page's measured rerun keeps
KEEP = {"gradients, setting": {"explorer.lessons.gradients.measures.recall_accuracy"}}


def _clear_view_caches(keep: set[str] = frozenset()) -> None:
    """Every computed result of the library; what is loaded from shipped files stays loaded (and
    MiniLM's corpus vectors with it, as a server keeps them from its first search on)."""
    keep = {*keep, "explorer.training.minilm._corpus_vectors"}
    runtime = sys.modules.get("explorer.serve.runtime")
    if hasattr(runtime, "clear"):  # this tree's runtime clears every cache of the library, its own among them
        runtime.clear(("result",), keep=frozenset(keep))
        return
    import streamlit as st  # an older tree (--before): its caches, found in its modules

    layers = ("explorer.views", "explorer.analysis")
    for name, module in list(sys.modules.items()):
        if name.startswith(layers):
            for value in vars(module).values():  # defined there: a loaded model (training) stays loaded
                own = getattr(value, "__module__", None) or ""
                if callable(getattr(value, "cache_clear", None)) and own.startswith(layers) \
                        and f"{own}.{getattr(value, '__name__', '')}" not in keep:
                    value.cache_clear()
    if runtime is not None:  # the lesson runtime's one cache
        runtime._shown.cache_clear()
    st.cache_data.clear()


def _instrument_pool(pieces: list[float]) -> None:
    """Record the thread CPU time of every piece the pool runs (nothing to do before the pool)."""
    try:
        from explorer.serve import pool
    except ImportError:
        try:  # an older tree: the pool was a module of the views
            from explorer.views import pool
        except ImportError:
            return
    submit = pool.WorkPool.submit

    def timed_submit(self, session, fn, *args, **kwargs):
        def timed(*a, **k):
            began = time.thread_time()
            try:
                return fn(*a, **k)
            finally:
                pieces.append(time.thread_time() - began)
        return submit(self, session, timed, *args, **kwargs)

    pool.WorkPool.submit = timed_submit


def measure(tree: Path) -> dict[str, dict[str, float]]:
    """In this process (whose sys.path starts with `tree`): every page's uncached rerun."""
    import torch
    from streamlit.testing.v1 import AppTest

    torch.set_num_threads(1)  # as app.py
    pieces: list[float] = []
    _instrument_pool(pieces)
    results = {}
    for page, (path, link) in PAGES.items():
        at = AppTest.from_file(str(tree / path), default_timeout=120)
        for key, value in link.items():
            at.query_params[key] = value
        at.run()  # imports, models, first computation
        problems = [e.value for e in at.exception]
        _clear_view_caches(KEEP.get(page, set()))
        pieces.clear()
        began = time.process_time()
        at.run()
        total = time.process_time() - began
        problems += [e.value for e in at.exception]
        results[page] = {"total": total, "piece": max(pieces, default=0.0),
                         "script": total - sum(pieces), "pieces": len(pieces), "errors": len(problems)}
    return results


def _extract(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "explorer", "app_pages", "app.py"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    for shared in ("pretrained", "assets"):  # the shipped models and files, the same for both
        (into / shared).symlink_to(ROOT / shared)
    return into


def _run_tree(tree: Path) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-m", "benchmarks.heavy", "--measure", str(tree)], cwd=ROOT, env=env,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def run(reps: int = 3) -> dict:
    """Phase `heavy` of benchmarks/run.py: this checkout only, `reps` fresh processes, medians (CPU seconds)."""
    runs = [_run_tree(ROOT) for _ in range(reps)]
    return {"reps": reps, "links": {page: link for page, (_, link) in PAGES.items()},
            "median": {page: {m: round(statistics.median(r[page][m] for r in runs), 3) for m in runs[0][page]}
                       for page in PAGES}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE, help="revision to compare with ('' for none)")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        sys.path.insert(0, str(args.measure))
        print(json.dumps(measure(args.measure)))
        return
    load_before = os.getloadavg()
    runs: dict[str, list[dict]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as scratch:
        trees = {"after": ROOT}
        if args.before:
            trees["before"] = _extract(args.before, Path(scratch))
        for _ in range(args.reps):
            for label, tree in trees.items():
                runs[label].append(_run_tree(tree))
    load_after = os.getloadavg()
    table = {label: {page: {m: statistics.median(r[page][m] for r in reps) for m in reps[0][page]}
                     for page in PAGES} for label, reps in runs.items() if reps}
    print(f"CPU seconds of one uncached rerun at the largest settings, median of {args.reps} "
          f"(load average {load_before[0]:.2f} before, {load_after[0]:.2f} after)")
    labels = list(table)
    print(f"{'page':<19}" + "".join(f"{f'{label} total':>14}{f'{label} piece':>14}{f'{label} script':>15}"
                                    for label in labels))
    for page in PAGES:
        row = "".join(f"{table[label][page]['total']:>14.3f}{table[label][page]['piece']:>14.3f}"
                      f"{table[label][page]['script']:>15.3f}" for label in labels)
        errors = sum(table[label][page]["errors"] for label in labels)
        print(f"{page:<19}{row}" + (f"   ({errors:.0f} page errors)" if errors else ""))
    if args.json:
        args.json.write_text(json.dumps({"load": [load_before, load_after], "median": table, "runs": runs}, indent=1))


if __name__ == "__main__":
    main()
