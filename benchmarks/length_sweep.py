"""The length sweep of issue #31: every shipped reversal model (one per encoding) at every length, on one core.

    .venv/bin/python -m benchmarks.length_sweep [--reps N]

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    reps = [one_rep() for _ in range(args.reps)]
    for key in ("load", "load CPU", "sweep", "sweep CPU", "cached"):
        values = [rep[key] for rep in reps]
        print(f"{key:9s} median {statistics.median(values):.3f} s  (reps: {', '.join(f'{v:.3f}' for v in values)})")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; lengths {LENGTHS}, "
          f"{length.SAMPLES} inputs each")
    for name, accuracies in sweep().items():
        print(f"  {name:26s} " + "  ".join(f"{n}:{a:.2f}" for n, a in accuracies.items()))


if __name__ == "__main__":
    main()
