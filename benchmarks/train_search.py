"""Search the live-training lesson's settings for a run whose attention visibly forms (issue 29).

For each configuration and seed, one live run (explorer.training.live.run_settings, one torch
thread) and, per run: the seconds of computing (training and the held-out measurements) and of
training alone when held-out accuracy first reaches 90 %, the final accuracy, and each probe
head's mean row maximum (the mean over query rows of the largest attention weight) at the end.

    nice -n 10 python -m benchmarks.train_search [--config NAME …] [--seeds 0 1 2] [--out FILE.json]

A bounded list of configurations (CONFIGS); runs one at a time.  Results are printed as a table
and appended to the JSON file (default test-artifacts/train_search.json).  The search chose the
lesson's default; phase `train-default` of benchmarks/run.py (`run_default`) measures that default,
as the page's Train button runs it, for a few seeds.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
import torch

from explorer.lessons.train.claims import anti_diagonal
from explorer.training.live import LiveSettings, run_settings

CONFIGS: dict[str, dict] = {
    "h2l2": {},  # the lesson's old default: 2 heads × 2 layers, d 32, lr 5e-3, 800 steps
    "h1l2": {"n_heads": 1},
    "h1l2-1200": {"n_heads": 1, "steps": 1200},
    "h1l2-lr1e-2": {"n_heads": 1, "learning_rate": 1e-2},
    "h1l2-d64": {"n_heads": 1, "d_model": 64},
    "h1l2-d64-lr3e-3": {"n_heads": 1, "d_model": 64, "learning_rate": 3e-3},
    "h1l3": {"n_heads": 1, "n_layers": 3},
    "h1l2-1200-lr1e-2": {"n_heads": 1, "steps": 1200, "learning_rate": 1e-2},
    "h1l2-1600": {"n_heads": 1, "steps": 1600},
    "h1l2-letters5": {"n_heads": 1, "letters": 5},
    "h1l2-letters4": {"n_heads": 1, "letters": 4},
    "h1l1": {"n_heads": 1, "n_layers": 1},
    "h1l2-const": {"n_heads": 1, "schedule": "constant"},
    "six-h1l2": {"n_heads": 1, "shortest": 6},
    "six-h1l2-1200": {"n_heads": 1, "shortest": 6, "steps": 1200},
    "six-h1l2-d64": {"n_heads": 1, "shortest": 6, "d_model": 64},
    "six-h2l2": {"shortest": 6},
    "six-h1l1": {"n_heads": 1, "n_layers": 1, "shortest": 6},
    "induction-h1l2": {"task": "induction", "n_heads": 1},
    "induction-h2l2": {"task": "induction"},
}
DEFAULT_OUT = Path(__file__).resolve().parents[1] / "test-artifacts" / "train_search.json"


def row_max(attention: np.ndarray) -> np.ndarray:
    """(layers, heads): the mean over query rows of each head's largest weight."""
    return attention.max(-1).mean(-1)


def measure(name: str, seed: int) -> dict:
    return measure_settings(name, LiveSettings(**{"task": "reverse", "seed": seed, **CONFIGS[name]}),
                            CONFIGS[name])


def run_default(seeds: tuple[int, ...] = (0, 1, 2)) -> dict:
    """Phase `train-default`: the live-training lesson's default run (TrainSettings().job, one torch
    thread), one run per seed, one at a time."""
    from explorer.lessons.train.view import TrainSettings

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        runs = []
        for seed in seeds:
            (settings,) = TrainSettings(seed=seed).job.runners
            runs.append(measure_settings("lesson default", settings, {}))
    finally:
        torch.set_num_threads(threads)
    return {"settings": repr(settings), "runs": runs}


def measure_settings(name: str, settings: LiveSettings, changes: dict) -> dict:
    seed = settings.seed
    first = None
    snapshots = []
    for snapshot in run_settings(settings):
        snapshots.append(snapshot)
        if first is None and snapshot.accuracy >= 0.9:
            first = snapshot
    last = snapshots[-1]
    sharp = row_max(last.attention)
    by_step = [(s.step, round(float(row_max(s.attention).max()), 3)) for s in snapshots]
    return {
        "config": name, "settings": changes, "seed": seed, "steps": last.step,
        "step_90": None if first is None else first.step,
        "seconds_90": None if first is None else round(first.seconds, 2),
        "training_seconds_90": None if first is None else round(first.training_seconds, 2),
        "final_accuracy": round(last.accuracy, 4), "seconds": round(last.seconds, 2),
        "row_max": [[round(float(v), 3) for v in layer] for layer in sharp],
        "row_max_without_last_row": [[round(float(v), 3) for v in layer]
                                     for layer in last.attention[..., :-1, :].max(-1).mean(-1)],
        "sharpest_by_step": by_step,
        "anti_diagonal": None if settings.task != "reverse" else [
            [round(float(v), 3) for v in layer] for layer in anti_diagonal(last.attention)],
    }


def table(results: list[dict]) -> str:
    """One row per run: configuration, seed, 90 % (step, seconds), final accuracy, each layer's row max."""
    lines = ["| config | seed | 90 % at step | s to 90 % (all / training) | final acc. | s total | "
             "row max per layer (heads) | anti-diagonal per layer |", "|---|---|---|---|---|---|---|---|"]
    for r in results:
        at = "—" if r["step_90"] is None else f"{r['seconds_90']} / {r['training_seconds_90']}"
        anti = " · ".join("/".join(f"{v:.2f}" for v in layer) for layer in r.get("anti_diagonal") or [])
        lines.append(f"| {r['config']} | {r['seed']} | {r['step_90'] or 'never'} | {at} | "
                     f"{100 * r['final_accuracy']:.1f} % | {r['seconds']} | "
                     f"{' · '.join('/'.join(f'{v:.2f}' for v in layer) for layer in r['row_max'])} | {anti or '—'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", nargs="*", default=list(CONFIGS), choices=list(CONFIGS))
    parser.add_argument("--seeds", nargs="*", type=int, default=[0, 1, 2])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--table", action="store_true", help="print the results in the file as a Markdown table")
    args = parser.parse_args(argv)
    if args.table:
        print(table(json.loads(args.out.read_text())))
        return 0
    if len(args.config) * len(args.seeds) > 40:
        parser.error("at most 40 runs at a time")
    torch.set_num_threads(1)
    results = json.loads(args.out.read_text()) if args.out.exists() else []
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for name in args.config:
        for seed in args.seeds:
            started = time.perf_counter()
            result = measure(name, seed)
            result.update(machine=platform.node(), wall=round(time.perf_counter() - started, 1),
                          when=time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()))
            results.append(result)
            args.out.write_text(json.dumps(results, indent=1) + "\n")
            print(f"{name:20s} seed {seed}: 90 % at step {result['step_90']} "
                  f"({result['seconds_90']} s, training {result['training_seconds_90']} s), "
                  f"final {100 * result['final_accuracy']:.1f} % in {result['seconds']} s, "
                  f"row max {result['row_max']}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
