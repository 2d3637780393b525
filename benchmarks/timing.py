"""Timing shared by the benchmarks (run as scripts: their folder is on ``sys.path``)."""

from __future__ import annotations

import time
from collections.abc import Callable


def best(fn: Callable[[], object], repeat: int) -> tuple[float, float, object]:
    """Best CPU and best wall seconds over ``repeat`` runs, and the last result."""
    cpu, wall, result = float("inf"), float("inf"), None
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        result = fn()
        cpu = min(cpu, time.process_time() - c0)
        wall = min(wall, time.perf_counter() - w0)
    return cpu, wall, result
