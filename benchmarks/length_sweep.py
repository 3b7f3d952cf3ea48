"""The length sweep of issue #31: every shipped reversal model (one per encoding) at every length, on one core.

    .venv/bin/python -m benchmarks.length_sweep [--reps N]   (phase `length-sweep` of benchmarks/run.py)

One torch thread.  Each rep starts from empty caches (explorer.analysis.length's per-model and
per-length caches; the shipped models' load cache too, so the first rep counts reading and checking
the files): `load` is that, `sweep` the accuracies of every model at LENGTHS (a learned table stops at
its last row), `cached` the same sweep again; wall-clock seconds, and the process's CPU seconds
(what a shared machine's load does not inflate).  Target (issue #31): the sweep in at most 2 s.  The machine
is shared: the load average is printed beside the times.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch

from explorer.analysis import length
from explorer.training.pretrained import load_model

TARGET_SWEEP_S = 2.0  # issue #31: every model at every length
LENGTHS = (2, 4, 6, 8, 10, 12, 15, 20, 25, 30)  # trained on 2–10: up to three times the longest


def sweep() -> dict[str, dict[int, float]]:
    return {name: length.accuracy_by_length(name, [n for n in LENGTHS if n <= length.longest_length(name)])
            for name in length.REVERSAL_MODELS.values()}


def one_rep() -> dict[str, float]:
    load_model.cache_clear()
    length.stretched_model.cache_clear()
    length._accuracy.cache_clear()
    start, start_cpu = time.perf_counter(), time.process_time()
    for name in length.REVERSAL_MODELS.values():
        load_model(name)
    loaded, loaded_cpu = time.perf_counter(), time.process_time()
    sweep()
    swept, swept_cpu = time.perf_counter(), time.process_time()
    sweep()
    return {"load": loaded - start, "sweep": swept - loaded, "sweep CPU": swept_cpu - loaded_cpu,
            "load CPU": loaded_cpu - start_cpu, "cached": time.perf_counter() - swept}


def run(reps: int = 3) -> dict:
    """Phase `length-sweep` of benchmarks/run.py: the medians over `reps` (seconds), every rep, the accuracies."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        runs = [one_rep() for _ in range(reps)]
        accuracies = {name: {str(n): round(a, 3) for n, a in by_length.items()} for name, by_length in sweep().items()}
    finally:
        torch.set_num_threads(threads)
    return {"reps": reps, "lengths": list(LENGTHS), "samples": length.SAMPLES,
            "median_s": {key: round(statistics.median(rep[key] for rep in runs), 3) for key in runs[0]},
            "runs": [{key: round(value, 3) for key, value in rep.items()} for rep in runs], "accuracy": accuracies}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    result = run(args.reps)
    for key, value in result["median_s"].items():
        print(f"{key:9s} median {value:.3f} s  (reps: {', '.join(f'{rep[key]:.3f}' for rep in result['runs'])})")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; lengths {LENGTHS}, "
          f"{length.SAMPLES} inputs each; target ≤ {TARGET_SWEEP_S} s for the sweep")
    for name, accuracies in result["accuracy"].items():
        print(f"  {name:26s} " + "  ".join(f"{n}:{a:.2f}" for n, a in accuracies.items()))


if __name__ == "__main__":
    main()
