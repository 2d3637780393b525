"""The committed record of the exact pooled optimum below the wall, on windows of the shared
Mooncake trace, re-checked into the certificate's figures without solving anything.

A *window* is the requests on lines ``first_line..last_line`` of the trace (1-based,
inclusive), replayed from an empty cache as one pooled stream of unit-size blocks (every
request's ``hash_ids`` in order). Its *wall* is its number of distinct blocks; its *wall
capacity* (:func:`.paging.wall_capacity`) is the least capacity at which a demand-fetch cache
reaches the wall. :mod:`.windows` (``pytools placement windows``) solves each window with
CP-SAT at ``capacity = floor(fraction * wall capacity)`` and writes the raw record
(:data:`WINDOWS_PATH`). :func:`check_record` re-checks, from the record and the trace, what is
cheap, and returns the figures (``optimum_windows`` of ``pooled-placement``):

* the trace's SHA-256 is the recorded one, and each window's stream regenerates from it (the
  SHA-256 of its block ids, and its counts);
* each solved window's status is OPTIMAL and its bound equals its objective, the solver ran
  one worker within the recorded limit;
* each objective equals the misses of Belady with bypass simulated now
  (:func:`pytools.traces.bypass.simulate_belady_bypass`): Lean proves that policy the
  demand-fetch optimum at every capacity (``beladyBypass_demandFetch_optimal``), CP-SAT finds
  the same number independently;
* each capacity is the stated fraction of the wall capacity, and below it and below the wall
  (so the optimum is above the wall: the capacity binds);
* the window that stopped the ladder is larger, not OPTIMAL, and its bound is not above
  Belady with bypass (it would contradict the theorem).

This module runs no solver, so certify re-checks the record without the ladder
(``tests/test_certify_imports.py``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from pytools.paths import mooncake_trace
from pytools.results.records import read_record
from pytools.traces.bypass import simulate_belady_bypass
from pytools.traces.trace import TraceError, scan_trace

from .instance import PlacementError
from .paging import OPTIMAL, wall_capacity
from .solver import SOLVER_NAME, hit_rate

#: The committed record, relative to the repository root.
WINDOWS_PATH = Path("data/placement/windows.json")

#: Format tag of the record.
RECORD_FORMAT = "pytools-placement-windows/1"

#: How the record's solves were made, stated in the record and the figures.
MODEL = ("interval model (pytools.results.placement.paging): one boolean per reuse interval "
         "(kept between two consecutive requests of a block, or not), a running count of kept "
         "intervals bounded by the capacity in every state, misses = distinct blocks + "
         "intervals not kept; demand fetch from an empty cache, bypass allowed, unit blocks")


# --------------------------------------------------------------------------- trace windows


@dataclass(frozen=True)
class TraceRequests:
    """Every request's block ids, in file order, and the file's SHA-256 (of the bytes read)."""

    sha256: str
    requests: tuple[tuple[int, ...], ...]

    def stream(self, first_line: int, last_line: int) -> list[int]:
        """The block stream of lines ``first_line..last_line`` (1-based, inclusive)."""
        if not 1 <= first_line <= last_line <= len(self.requests):
            raise PlacementError(f"window {first_line}:{last_line} is not inside the trace's "
                                 f"{len(self.requests)} lines")
        return [b for ids in self.requests[first_line - 1:last_line] for b in ids]


def read_requests(path: Path) -> TraceRequests:
    """Read and validate the trace once (the project's reader, :func:`scan_trace`), keeping
    each request; raises :class:`PlacementError` naming the file (and line) if it is bad."""
    requests: list[tuple[int, ...]] = []
    try:
        summary = scan_trace(Path(path), per_request=lambda _n, ids: requests.append(tuple(ids)))
    except TraceError as exc:
        raise PlacementError(str(exc)) from None
    return TraceRequests(summary.sha256, tuple(requests))


def stream_sha256(stream: Sequence[int]) -> str:
    """SHA-256 of a window's block ids written as a compact JSON array."""
    return hashlib.sha256(json.dumps(list(stream), separators=(",", ":")).encode()).hexdigest()


def capacity_of(wall_cap: int, fraction: Fraction) -> int:
    """The capacity a window is solved at: ``floor(fraction * wall capacity)``."""
    return (fraction.numerator * wall_cap) // fraction.denominator


# --------------------------------------------------------------------------- re-checking


def load_record(path: Path) -> tuple[dict[str, Any], str]:
    """The record at ``path`` and the SHA-256 of the bytes parsed; raises
    :class:`PlacementError` naming the file if it is absent, not JSON, or not a record of
    this format."""
    return read_record(path, "windows", RECORD_FORMAT, PlacementError)


#: Keys every window entry has, with their types.
_ENTRY_KEYS: dict[str, type | tuple[type, ...]] = {
    "first_line": int, "last_line": int, "requests": int, "references": int,
    "distinct_blocks": int, "wall_capacity": int, "capacity": int, "stream_sha256": str,
    "status": str, "objective": (int, type(None)), "bound": int,
    "solve_seconds": (int, float), "deterministic_seconds": (int, float),
}


def _entry_problems(name: str, entry: Any, trace: TraceRequests,
                    fraction: Fraction) -> tuple[list[str], list[int] | None]:
    """Problems of one entry that do not depend on its status, and its stream (``None`` when
    it does not regenerate)."""
    if not isinstance(entry, dict):
        return [f"{name}: not an object"], None
    bad = [k for k, t in _ENTRY_KEYS.items()
           if k not in entry or not isinstance(entry[k], t) or isinstance(entry[k], bool)]
    if bad:
        return [f"{name}: missing or mistyped {', '.join(bad)}"], None
    where = f"{name} (lines {entry['first_line']}-{entry['last_line']})"
    try:
        stream = trace.stream(entry["first_line"], entry["last_line"])
    except PlacementError as exc:
        return [f"{where}: {exc}"], None
    problems = []
    if stream_sha256(stream) != entry["stream_sha256"]:
        return [f"{where}: the window does not regenerate from the trace (stream SHA-256 "
                f"{stream_sha256(stream)}, recorded {entry['stream_sha256']})"], None
    wall_cap = wall_capacity(stream)
    fresh = {"requests": entry["last_line"] - entry["first_line"] + 1,
             "references": len(stream), "distinct_blocks": len(set(stream)),
             "wall_capacity": wall_cap, "capacity": capacity_of(wall_cap, fraction)}
    problems += [f"{where}: {k} recorded {entry[k]}, recomputed {v}"
                 for k, v in fresh.items() if entry[k] != v]
    if not entry["capacity"] < entry["distinct_blocks"]:
        problems.append(f"{where}: capacity {entry['capacity']} is not below the wall "
                        f"{entry['distinct_blocks']}")
    if not entry["capacity"] < wall_cap:
        problems.append(f"{where}: capacity {entry['capacity']} is not below the wall "
                        f"capacity {wall_cap} (the wall would be reachable)")
    return problems, stream


def check_record(record: dict[str, Any], trace: TraceRequests) -> dict[str, Any]:
    """Re-check the record against the trace (see the module docstring) and return the
    figures; raise :class:`PlacementError` listing every problem found."""
    problems: list[str] = []
    recorded_sha = (record.get("trace") or {}).get("sha256")
    if recorded_sha != trace.sha256:
        raise PlacementError(f"the record is for a trace with SHA-256 {recorded_sha}, the "
                             f"trace read has {trace.sha256}")
    solver = record.get("solver") or {}
    params = solver.get("params") or {}
    if params.get("num_workers") != 1:
        problems.append(f"solver params: num_workers {params.get('num_workers')!r}, not 1")
    limit = record.get("time_limit_deterministic_seconds")
    frac = record.get("capacity_fraction")
    if not (isinstance(limit, int | float) and limit > 0):
        raise PlacementError(f"time_limit_deterministic_seconds {limit!r} "
                             "is not a positive number")
    if not (isinstance(frac, list) and len(frac) == 2 and all(type(x) is int for x in frac)
            and 0 <= frac[0] < frac[1]):
        raise PlacementError(f"capacity_fraction {frac!r} is not [p, q] with 0 <= p < q")
    fraction = Fraction(frac[0], frac[1])
    solved = record.get("solved")
    if not isinstance(solved, list) or not solved:
        raise PlacementError("the record has no solved window")
    rows: list[dict[str, Any]] = []
    previous_end = 0
    for i, entry in enumerate(solved):
        name = f"solved[{i}]"
        found, stream = _entry_problems(name, entry, trace, fraction)
        problems += found
        if stream is None:
            continue
        where = f"{name} (lines {entry['first_line']}-{entry['last_line']})"
        if entry["last_line"] <= previous_end:
            problems.append(f"{where}: not larger than the window before it")
        previous_end = entry["last_line"]
        if entry["status"] != OPTIMAL:
            problems.append(f"{where}: status {entry['status']}, not OPTIMAL")
        if entry["bound"] != entry["objective"]:
            problems.append(f"{where}: bound {entry['bound']} differs from the objective "
                            f"{entry['objective']}")
        if entry["deterministic_seconds"] > limit:
            problems.append(f"{where}: solved in {entry['deterministic_seconds']} "
                            f"deterministic s, over the limit {limit}")
        belady = len(stream) - simulate_belady_bypass(stream, entry["capacity"])
        if entry["objective"] != belady:
            problems.append(f"{where}: objective {entry['objective']} differs from Belady "
                            f"with bypass, {belady} misses")
        rows.append(_row(entry, belady))
    stop = record.get("not_proved")
    stop_row = None
    if stop is not None:
        found, stream = _entry_problems("not_proved", stop, trace, fraction)
        problems += found
        if stream is not None:
            where = f"not_proved (lines {stop['first_line']}-{stop['last_line']})"
            if stop["status"] == OPTIMAL:
                problems.append(f"{where}: status OPTIMAL, yet recorded as not proved")
            if stop["last_line"] <= previous_end:
                problems.append(f"{where}: not larger than the largest solved window")
            belady = len(stream) - simulate_belady_bypass(stream, stop["capacity"])
            if stop["bound"] > belady:
                problems.append(f"{where}: bound {stop['bound']} above Belady with bypass "
                                f"{belady}, against beladyBypass_demandFetch_optimal")
            stop_row = {k: stop[k] for k in ("first_line", "last_line", "requests",
                                             "references", "distinct_blocks", "wall_capacity",
                                             "capacity", "status", "bound",
                                             "deterministic_seconds")}
            stop_row["belady_bypass_misses"] = belady
    if problems:
        raise PlacementError("windows record: " + "; ".join(problems))
    return {
        "label": "Exact pooled optimum below the wall on windows of the shared Mooncake trace "
                 "(lines first..last, replayed alone from an empty cache, unit blocks)",
        "model": record.get("model", MODEL),
        "capacity_rule": f"capacity = floor({fraction} x wall capacity), the wall capacity "
                         "being the most reuse intervals alive in one state (the least "
                         "capacity at which the optimum is the wall)",
        "time_limit_deterministic_seconds": limit,
        "solver": solver.get("name", SOLVER_NAME),
        "solver_version": solver.get("version"),
        "solver_params": params,
        "trace_sha256": trace.sha256,
        "windows": rows,
        "largest": rows[-1],
        "not_proved": stop_row,
        "theorem": "KVCache.Placement.beladyBypass_demandFetch_optimal",
        "computed_by": "CP-SAT (recorded in data/placement/windows.json); re-checked by "
                       "Python from that record and the trace: stream hashes, OPTIMAL, bound "
                       "= objective = Belady with bypass simulated now, capacity below the "
                       "wall",
    }


def _row(entry: dict[str, Any], belady: int) -> dict[str, Any]:
    """A solved window as the figures show it (wall-clock seconds stay in the record: they
    depend on the machine; CP-SAT's deterministic time does not)."""
    return {
        "first_line": entry["first_line"],
        "last_line": entry["last_line"],
        "requests": entry["requests"],
        "references": entry["references"],
        "wall": entry["distinct_blocks"],
        "wall_capacity": entry["wall_capacity"],
        "capacity": entry["capacity"],
        "status": entry["status"],
        "objective": entry["objective"],
        "bound": entry["bound"],
        "belady_bypass_misses": belady,
        "hit_rate": hit_rate(entry["references"] - entry["objective"], entry["references"]),
        "deterministic_seconds": entry["deterministic_seconds"],
    }


@dataclass(frozen=True)
class WindowsEvidence:
    """The ``optimum_windows`` figures and the two files they come from (record, trace)."""

    figures: dict[str, Any]
    record_sha256: str
    trace_sha256: str


def windows_evidence(root: Path) -> WindowsEvidence:
    """Re-check the committed record against the shared trace; raises
    :class:`PlacementError` (naming the file) if either is absent or a check fails."""
    record_path = Path(root) / WINDOWS_PATH
    trace_path = mooncake_trace(root)
    if not trace_path.is_file():
        raise PlacementError(f"{trace_path}: the Mooncake trace is absent "
                             "(see data/mooncake/README.md)")
    record, record_sha = load_record(record_path)
    trace = read_requests(trace_path)
    try:
        figures = check_record(record, trace)
    except PlacementError as exc:
        raise PlacementError(f"{record_path}: {exc}") from None
    return WindowsEvidence(figures, record_sha, trace.sha256)
