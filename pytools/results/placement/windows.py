"""The exact pooled optimum below the wall on windows of the shared Mooncake trace: the CP-SAT
solves, made once into the committed record (``pytools placement windows``).

A *window* and its capacity are defined in :mod:`.windows_record`, which re-checks the record
for the certificate without solving anything. Each window is solved at
``capacity = floor(fraction * wall capacity)``, below both the wall and the wall capacity,
with the interval model of :mod:`.paging`, one CP-SAT worker and a limit in CP-SAT's
deterministic time (its count of work, so the record does not depend on the load of the
machine that made it; wall-clock seconds are recorded next to it).

Solving takes time, so :func:`run_ladder` does it once and writes a raw record
(:data:`.windows_record.WINDOWS_PATH`): windows of ``first_lines``, twice that, ... lines
from one first line, until the first window CP-SAT does not prove OPTIMAL within the limit
(or the trace ends). The schedule CP-SAT returns for each window is replayed independently
(:func:`.paging.replay_kept`) before it is recorded.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from pytools.results.records import ortools_version

from .instance import PlacementError
from .paging import OPTIMAL, PAGING_PARAMS, replay_kept, solve_paging, wall_capacity
from .solver import SOLVER_NAME
from .windows_record import (
    MODEL,
    RECORD_FORMAT,
    TraceRequests,
    capacity_of,
    read_requests,
    stream_sha256,
)


@dataclass(frozen=True)
class Ladder:
    """Which windows :func:`run_ladder` solves: from line ``first_line``, ``first_lines``
    lines, then ``growth`` times as many, ... up to ``max_lines`` (or the trace's end); each
    at ``fraction`` of its wall capacity, within ``time_limit`` deterministic seconds
    (CP-SAT's count of work: the same limit stops a solve at the same point on any load)."""

    first_line: int = 1
    first_lines: int = 256
    growth: int = 2
    max_lines: int | None = None
    fraction: Fraction = Fraction(1, 2)
    time_limit: float = 8.0

    def __post_init__(self) -> None:
        if self.first_line < 1 or self.first_lines < 1 or self.growth < 2:
            raise PlacementError("ladder: need first_line >= 1, first_lines >= 1, growth >= 2")
        if not 0 <= self.fraction < 1:
            raise PlacementError(f"ladder: the capacity fraction {self.fraction} is not in [0, 1)")
        if not self.time_limit > 0:
            raise PlacementError(f"ladder: the time limit {self.time_limit} is not positive")


# --------------------------------------------------------------------------- solving


def solve_window(trace: TraceRequests, first_line: int, last_line: int, ladder: Ladder,
                 params: dict[str, Any]) -> dict[str, Any]:
    """Solve one window and return its record entry. The schedule CP-SAT returns is replayed
    independently (:func:`.paging.replay_kept`); a schedule that breaks the capacity or
    misses a different number of times than the objective raises :class:`PlacementError`."""
    stream = trace.stream(first_line, last_line)
    wall_cap = wall_capacity(stream)
    capacity = capacity_of(wall_cap, ladder.fraction)
    result = solve_paging(stream, capacity, ladder.time_limit, params)
    if result.kept is not None:
        replayed = replay_kept(stream, capacity, result.kept)
        if replayed != result.objective:
            raise PlacementError(f"window {first_line}:{last_line}: the schedule replays to "
                                 f"{replayed} misses, the objective is {result.objective}")
    return {
        "first_line": first_line,
        "last_line": last_line,
        "requests": last_line - first_line + 1,
        "references": len(stream),
        "distinct_blocks": len(set(stream)),
        "wall_capacity": wall_cap,
        "capacity": capacity,
        "stream_sha256": stream_sha256(stream),
        "status": result.status,
        "objective": result.objective,
        "bound": result.bound,
        "solve_seconds": round(result.wall_seconds, 3),
        "deterministic_seconds": round(result.deterministic_seconds, 3),
        "reuse_intervals": result.intervals,
        "load_constraints": result.constraints,
    }


def ladder_windows(ladder: Ladder, lines: int) -> list[tuple[int, int]]:
    """The windows of the ladder inside a trace of ``lines`` lines (the last one clamped to
    the trace's end or to ``max_lines``)."""
    top = lines - ladder.first_line + 1
    if ladder.max_lines is not None:
        top = min(top, ladder.max_lines)
    windows, size = [], ladder.first_lines
    while top >= 1:
        size = min(size, top)
        windows.append((ladder.first_line, ladder.first_line + size - 1))
        if size == top:
            break
        size *= ladder.growth
    return windows


def run_ladder(trace_path: Path, ladder: Ladder, trace_name: str,
               report: Callable[[dict[str, Any]], None] | None = None,
               params: dict[str, Any] | None = None) -> dict[str, Any]:
    """Solve the ladder's windows of the trace until one is not OPTIMAL; return the record.

    ``trace_name`` is how the record names the trace. Windows in which no block is requested
    twice (wall capacity 0: nothing to decide) are skipped. ``report`` gets each entry.
    Raises :class:`PlacementError` when no window is proved OPTIMAL (a record would certify
    nothing).
    """
    params = dict(PAGING_PARAMS if params is None else params)
    start = time.perf_counter()
    trace = read_requests(trace_path)
    if ladder.first_line > len(trace.requests):
        raise PlacementError(f"{trace_path}: the ladder starts at line {ladder.first_line}, "
                             f"past the trace's {len(trace.requests)} lines")
    solved: list[dict[str, Any]] = []
    stopped: dict[str, Any] | None = None
    for first, last in ladder_windows(ladder, len(trace.requests)):
        if wall_capacity(trace.stream(first, last)) == 0:
            continue
        entry = solve_window(trace, first, last, ladder, params)
        if report is not None:
            report(entry)
        if entry["status"] != OPTIMAL:
            stopped = entry
            break
        solved.append(entry)
    if not solved:
        raise PlacementError(f"{trace_path}: no window of the ladder was proved OPTIMAL "
                             "(none reuses a block, or the first hit the limit)")
    return {
        "format": RECORD_FORMAT,
        "trace": {"path": trace_name, "sha256": trace.sha256},
        "model": MODEL,
        "capacity_fraction": [ladder.fraction.numerator, ladder.fraction.denominator],
        "ladder": {"first_line": ladder.first_line, "first_lines": ladder.first_lines,
                   "growth": ladder.growth, "max_lines": ladder.max_lines},
        "time_limit_deterministic_seconds": ladder.time_limit,
        "solver": {"name": SOLVER_NAME, "version": ortools_version(), "params": params},
        "solved": solved,
        "not_proved": stopped,
        "total_seconds": round(time.perf_counter() - start, 3),
    }
