"""Reproducible model construction in a server where many sessions run at once.

`torch.nn` modules draw their initial weights from torch's global random generator.  Two sessions
building seeded models at the same moment would interleave their draws and get each other's
weights, so every seeded build goes through this one lock, on a forked generator state.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import torch

__all__ = ["SEEDING_LOCK", "seeded"]

# Re-entrant: a caller may hold it around several builds that each take it again.
SEEDING_LOCK = threading.RLock()


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[None]:
    """Run the body with torch's global generator seeded to `seed`, restored afterwards."""
    with SEEDING_LOCK, torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        yield
