"""The committed record of the exact prefix-cache optimum on windows of the shared Mooncake
trace, re-checked into the certificate's figures without solving anything.

**The model** (prefix semantics of :mod:`pytools.traces.prefix`, counted in blocks). A window
is the requests on lines ``first_line..last_line`` (1-based, inclusive), replayed alone from an
empty cache; a request is its ``hash_ids`` (chained: an id names its whole prefix, so each id
has one predecessor, its *parent*). A run of a cache of ``capacity`` blocks is a sequence of
states ``S_0 = {}, S_1, ..., S_R`` (``S_t``: the blocks held after request ``t``) with

* ``S_t`` closed under prefixes (a block held, its parent held: a radix tree);
* ``S_t`` a subset of ``S_{t-1}`` plus request ``t``'s blocks (demand fetch; any block may
  be evicted, any block of the request declined: bypass allowed);
* ``|S_t| <= capacity``.

Request ``t`` hits the longest leading run of its blocks held in ``S_{t-1}``; the objective is
the blocks hit over the window. The *prefix wall capacity* is the least capacity at which every
block is kept from one of its requests to the next (the most such reuse intervals alive after
one request); the windows are solved at ``floor(fraction x`` that ``)``, so the capacity binds.

:mod:`.prefix_optima` (``pytools ceiling prefix-optima``) solves the windows with CP-SAT (one
boolean per reuse interval, prefix closure as implications, the capacity as a running count)
and records, next to each optimum, the trace authors' simulator (``kvcache-simulator``, its
``optimal`` heuristic and its LRU) at the same capacity. :func:`check_record` re-checks, from
the record and the trace alone:

* the trace's SHA-256, and each window's requests (the SHA-256 of their ids, their counts);
* the capacity rule, and the capacity below both the window's distinct blocks and its prefix
  wall capacity;
* status OPTIMAL, bound = objective, one worker, within the recorded limit;
* the committed solution (which reuse intervals are kept) replayed here into states that are
  prefix-closed, demand-fetch and within the capacity, whose prefix hits equal the objective;
* the objective at most the flat optimum of the same window (Belady with bypass on the
  window's block stream: a prefix cache is a flat demand-fetch cache with bypass), and at
  least radix LRU (computed here) and both recorded simulator figures: a record claiming more
  than the flat optimum, or less than a policy achieves, is refused;
* the simulator's LRU equal to the prefix curve's LRU computed here, where the capacity is at
  least the window's longest request (where the two are the same cache);
* Belady with bypass's own run, read as a prefix cache run (:func:`flat_run_as_prefix`):
  where it is one, it scores the flat optimum, which is then the prefix optimum, so an
  OPTIMAL objective must equal it; for a window CP-SAT did not prove, this gives the
  optimum without a solver. (With chained ids a parent is referenced before its child in
  every request, so its next use comes first and Belady drops a child first.)

This module runs no solver and no simulator, so certify re-checks the record without either.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from pytools.paths import mooncake_trace
from pytools.results.records import read_record
from pytools.traces.bypass import simulate_belady_bypass
from pytools.traces.prefix import PrefixCurve, compute_prefix_curve
from pytools.traces.trace import TraceError, TraceRead, percent_str, read_trace

from .prefix_model import (
    PrefixIntervals,
    PrefixOptimaError,
    belady_bypass_kept,
    capacity_of,
    decode_kept,
    prefix_intervals,
    radix_lru_hits,
    replay_kept,
    window_facts,
    window_requests,
)

#: The committed record, relative to the repository root.
PREFIX_OPTIMA_PATH = Path("data/ceiling/prefix_optima.json")

#: Format tag of the record.
RECORD_FORMAT = "pytools-prefix-optima/1"

#: CP-SAT's status when the objective equals the proved bound.
OPTIMAL = "OPTIMAL"

#: How the record's solves were made, stated in the record and the figures.
MODEL = ("prefix (radix) cache of unit blocks, from an empty cache: one boolean per reuse "
         "interval of a block (kept between two consecutive requests that contain it, or "
         "not); a kept interval of a block implies every kept interval of its parent inside "
         "it (closure under prefixes); a running count of kept intervals bounded by the "
         "capacity after every request; hits = kept intervals (under closure a request's "
         "held blocks are its longest held leading run); demand fetch, bypass allowed")


# --------------------------------------------------------------------------- re-checking


def load_record(path: Path) -> tuple[dict[str, Any], str]:
    """The record at ``path`` and the SHA-256 of the bytes parsed; raises
    :class:`PrefixOptimaError` naming the file if it is absent, not JSON, or not a record of
    this format."""
    return read_record(path, "prefix-optima", RECORD_FORMAT, PrefixOptimaError)


#: Keys every window entry has, with their types.
_ENTRY_KEYS: dict[str, type | tuple[type, ...]] = {
    "first_line": int, "last_line": int, "requests": int, "references": int,
    "distinct_blocks": int, "longest_request": int, "reuse_intervals": int,
    "prefix_wall_capacity": int, "capacity": int, "requests_sha256": str, "status": str,
    "objective": (int, type(None)), "bound": int, "kept": (str, type(None)),
    "solve_seconds": (int, float), "deterministic_seconds": (int, float),
    "simulator": (dict, type(None)),
}

#: Keys of an entry's simulator figures (blocks hit, at ``cache_blocks`` blocks).
_SIM_KEYS = ("cache_blocks", "optimal_hits", "lru_hits")


@dataclass(frozen=True)
class _Checked:
    """An entry whose window regenerates: its requests, intervals and where it is."""

    where: str
    requests: tuple[tuple[int, ...], ...]
    iv: PrefixIntervals


def _entry(name: str, entry: Any, trace: TraceRead, fraction: Fraction,
           problems: list[str]) -> _Checked | None:
    """Check what of one entry does not depend on its status; ``None`` when the window does
    not regenerate (the problem is appended)."""
    if not isinstance(entry, dict):
        problems.append(f"{name}: not an object")
        return None
    bad = [k for k, t in _ENTRY_KEYS.items()
           if k not in entry or not isinstance(entry[k], t) or isinstance(entry[k], bool)]
    if bad:
        problems.append(f"{name}: missing or mistyped {', '.join(bad)}")
        return None
    where = f"{name} (lines {entry['first_line']}-{entry['last_line']})"
    try:
        requests = window_requests(trace.requests, entry["first_line"], entry["last_line"])
        iv = prefix_intervals(requests)
    except PrefixOptimaError as exc:
        problems.append(f"{where}: {exc}")
        return None
    facts = window_facts(requests, iv)
    if facts.requests_sha256 != entry["requests_sha256"]:
        problems.append(f"{where}: the window does not regenerate from the trace (SHA-256 "
                        f"{facts.requests_sha256}, recorded {entry['requests_sha256']})")
        return None
    fresh = {**{k: v for k, v in facts.__dict__.items() if k != "requests_sha256"},
             "capacity": capacity_of(facts.prefix_wall_capacity, fraction)}
    problems += [f"{where}: {k} recorded {entry[k]}, recomputed {v}"
                 for k, v in fresh.items() if entry[k] != v]
    if not entry["capacity"] < min(facts.distinct_blocks, facts.prefix_wall_capacity):
        problems.append(f"{where}: capacity {entry['capacity']} is not below the distinct "
                        f"blocks {facts.distinct_blocks} and the prefix wall capacity "
                        f"{facts.prefix_wall_capacity}")
    return _Checked(where, requests, iv)


def _check_solved(entry: dict[str, Any], c: _Checked, limit: float,
                  problems: list[str]) -> dict[str, Any] | None:
    """Check a solved entry (OPTIMAL, its solution, the bounds around it); its figures row."""
    where, cap = c.where, entry["capacity"]
    if entry["status"] != OPTIMAL:
        problems.append(f"{where}: status {entry['status']}, not OPTIMAL")
    if entry["objective"] is None or entry["kept"] is None:
        problems.append(f"{where}: no solution recorded")
        return None
    if entry["bound"] != entry["objective"]:
        problems.append(f"{where}: bound {entry['bound']} differs from the objective "
                        f"{entry['objective']}")
    if entry["deterministic_seconds"] > limit:
        problems.append(f"{where}: solved in {entry['deterministic_seconds']} deterministic "
                        f"s, over the limit {limit}")
    try:
        replayed = replay_kept(c.requests, cap, c.iv, decode_kept(entry["kept"],
                                                                   len(c.iv.blocks)))
    except PrefixOptimaError as exc:
        problems.append(f"{where}: the recorded solution is not a prefix cache run: {exc}")
        return None
    if replayed != entry["objective"]:
        problems.append(f"{where}: the recorded solution replays to {replayed} hits, the "
                        f"objective is {entry['objective']}")
    stream = [b for r in c.requests for b in r]
    flat = simulate_belady_bypass(stream, cap)
    if entry["objective"] > flat:
        problems.append(f"{where}: objective {entry['objective']} above the flat optimum "
                        f"(Belady with bypass) {flat}: no prefix cache hits more")
    attained = flat_run_as_prefix(c, cap, flat, problems)
    if attained is not None and entry["objective"] != attained:
        problems.append(f"{where}: OPTIMAL objective {entry['objective']}, yet Belady with "
                        f"bypass's own run is a prefix cache run of {attained} hits")
    lru = radix_lru_hits(c.requests, cap)
    if lru > entry["objective"]:
        problems.append(f"{where}: radix LRU hits {lru}, more than the optimum "
                        f"{entry['objective']}")
    sim = _check_simulator(entry, c, lru, problems)
    row = _row(entry, flat, lru, sim)
    row["flat_run_prefix_hits"] = attained
    return row


def flat_run_as_prefix(c: _Checked, capacity: int, flat: int,
                       problems: list[str]) -> int | None:
    """The prefix hits of Belady with bypass's own run read as a prefix cache
    (:func:`.prefix_model.belady_bypass_kept`, replayed by :func:`.prefix_model.replay_kept`)
    when that replay is a prefix cache run scoring the flat optimum ``flat``; else ``None``.
    A prefix cache is a flat demand-fetch cache with bypass, so then ``flat`` is the prefix
    optimum too, found without a solver."""
    kept, hits = belady_bypass_kept(c.requests, capacity, c.iv)
    if hits != flat:
        problems.append(f"{c.where}: Belady with bypass scores {hits} here and {flat} in "
                        "pytools.traces.bypass")
        return None
    try:
        replayed = replay_kept(c.requests, capacity, c.iv, kept)
    except PrefixOptimaError:
        return None
    return replayed if replayed == flat else None


def _check_simulator(entry: dict[str, Any], c: _Checked, lru: int,
                     problems: list[str]) -> dict[str, int] | None:
    """Check an entry's recorded simulator figures against the optimum and the prefix
    curve's LRU; the figures, or ``None`` when none are recorded."""
    sim = entry["simulator"]
    if sim is None:
        return None
    if any(type(sim.get(k)) is not int for k in _SIM_KEYS):
        problems.append(f"{c.where}: simulator figures missing or mistyped")
        return None
    if sim["cache_blocks"] != entry["capacity"]:
        problems.append(f"{c.where}: the simulator ran at {sim['cache_blocks']} blocks, not "
                        f"the capacity {entry['capacity']}")
    for key in ("optimal_hits", "lru_hits"):
        if entry["objective"] is not None and sim[key] > entry["objective"]:
            problems.append(f"{c.where}: simulator {key} {sim[key]} above the proved "
                            f"optimum {entry['objective']}")
    if entry["capacity"] >= entry["longest_request"] and sim["lru_hits"] != lru:
        problems.append(f"{c.where}: simulator LRU {sim['lru_hits']} hits, the prefix "
                        f"curve's radix LRU {lru}")
    return {k: sim[k] for k in _SIM_KEYS}


def _check_header(record: dict[str, Any], trace: TraceRead
                  ) -> tuple[float, Fraction, list[str]]:
    """The record's limit and capacity fraction, and the header's problems."""
    recorded_sha = (record.get("trace") or {}).get("sha256")
    if recorded_sha != trace.sha256:
        raise PrefixOptimaError(f"the record is for a trace with SHA-256 {recorded_sha}, the "
                                f"trace read has {trace.sha256}")
    problems = []
    params = (record.get("solver") or {}).get("params") or {}
    if params.get("num_workers") != 1:
        problems.append(f"solver params: num_workers {params.get('num_workers')!r}, not 1")
    limit = record.get("time_limit_deterministic_seconds")
    frac = record.get("capacity_fraction")
    if not (isinstance(limit, int | float) and limit > 0):
        raise PrefixOptimaError(f"time_limit_deterministic_seconds {limit!r} is not a "
                                "positive number")
    if not (isinstance(frac, list) and len(frac) == 2 and all(type(x) is int for x in frac)
            and 0 <= frac[0] < frac[1]):
        raise PrefixOptimaError(f"capacity_fraction {frac!r} is not [p, q] with 0 <= p < q")
    return float(limit), Fraction(frac[0], frac[1]), problems


def check_record(record: dict[str, Any], trace: TraceRead) -> dict[str, Any]:
    """Re-check the record against the trace (see the module docstring) and return the
    figures; raise :class:`PrefixOptimaError` listing every problem found."""
    limit, fraction, problems = _check_header(record, trace)
    solved = record.get("solved")
    if not isinstance(solved, list) or not solved:
        raise PrefixOptimaError("the record has no solved window")
    rows: list[dict[str, Any]] = []
    largest: dict[int, int] = {}  # first line -> last line of the largest window so far
    for i, entry in enumerate(solved):
        c = _entry(f"solved[{i}]", entry, trace, fraction, problems)
        if c is None:
            continue
        if entry["last_line"] <= largest.get(entry["first_line"], 0):
            problems.append(f"{c.where}: not larger than the window before it")
        largest[entry["first_line"]] = entry["last_line"]
        row = _check_solved(entry, c, limit, problems)
        if row is not None:
            rows.append(row)
    stops = record.get("not_proved")
    if not isinstance(stops, list):
        raise PrefixOptimaError("not_proved is not a list")
    stop_rows = []
    for i, stop in enumerate(stops):
        c = _entry(f"not_proved[{i}]", stop, trace, fraction, problems)
        if c is not None:
            if stop["status"] == OPTIMAL:
                problems.append(f"{c.where}: status OPTIMAL, yet recorded as not proved")
            if stop["last_line"] <= largest.get(stop["first_line"], 0):
                problems.append(f"{c.where}: not larger than the largest solved window")
            stream = [b for r in c.requests for b in r]
            flat = simulate_belady_bypass(stream, stop["capacity"])
            if stop["bound"] > flat:
                problems.append(f"{c.where}: bound {stop['bound']} above the flat optimum "
                                f"{flat}")
            stop_row = {k: stop[k] for k in ("first_line", "last_line", "requests",
                                             "references", "distinct_blocks", "capacity",
                                             "status", "objective", "bound",
                                             "deterministic_seconds")}
            stop_row["flat_optimum_hits"] = flat
            stop_row["flat_run_prefix_hits"] = flat_run_as_prefix(c, stop["capacity"], flat,
                                                                 problems)
            stop_rows.append(stop_row)
    if problems:
        raise PrefixOptimaError("prefix-optima record: " + "; ".join(problems))
    solver = record.get("solver") or {}
    return {
        "label": "Exact optimum of prefix (radix) caches on windows of the shared Mooncake "
                 "trace (lines first..last, replayed alone from an empty cache, hits in "
                 "blocks), beside the trace authors' simulator and the flat optimum",
        "model": record.get("model", MODEL),
        "capacity_rule": f"capacity = floor({fraction} x prefix wall capacity), the prefix "
                         "wall capacity being the most reuse intervals alive after one request "
                         "(the least capacity at which every reuse hits)",
        "simulator": record.get("simulator"),
        "time_limit_deterministic_seconds": limit,
        "solver": solver.get("name"),
        "solver_version": solver.get("version"),
        "solver_params": solver.get("params"),
        "trace_sha256": trace.sha256,
        "windows": rows,
        "largest": rows[-1] if rows else None,
        "heuristic_short_of_optimum": sum(1 for r in rows if (r["heuristic_gap"] or 0) > 0),
        "not_proved": stop_rows,
        "computed_by": f"CP-SAT (recorded in {PREFIX_OPTIMA_PATH.as_posix()}); re-checked by "
                       "Python from that record and the trace: window hashes, OPTIMAL, bound "
                       "= objective = the committed solution's prefix hits replayed now, at "
                       "most the flat optimum (Belady with bypass simulated now), at least "
                       "radix LRU (the prefix curve, now) and the simulator's recorded hits",
        "flat_run_method": "flat_run_prefix_hits: Belady with bypass's own run on the "
                           "window's block stream, read as kept reuse intervals and replayed "
                           "now as a prefix cache run (closed under prefixes after every "
                           "request, within the capacity); when it is one and scores the flat "
                           "optimum, the flat optimum is the prefix optimum, with no solver "
                           "(null: it is not one)",
        "flat_run_attained": sum(1 for r in [*rows, *stop_rows]
                                 if r["flat_run_prefix_hits"] is not None),
    }


def _row(entry: dict[str, Any], flat: int, lru: int,
         sim: dict[str, int] | None) -> dict[str, Any]:
    """A solved window as the figures show it; gaps are the optimum minus a policy's hits
    (the flat optimum minus the prefix optimum for ``flat_gap``)."""
    opt = entry["objective"]
    return {
        "first_line": entry["first_line"],
        "last_line": entry["last_line"],
        "requests": entry["requests"],
        "references": entry["references"],
        "distinct_blocks": entry["distinct_blocks"],
        "longest_request": entry["longest_request"],
        "prefix_wall_capacity": entry["prefix_wall_capacity"],
        "capacity": entry["capacity"],
        "status": entry["status"],
        "optimum_hits": opt,
        "flat_optimum_hits": flat,
        "flat_gap": flat - opt,
        "radix_lru_hits": lru,
        "lru_gap": opt - lru,
        "simulator_optimal_hits": sim["optimal_hits"] if sim else None,
        "heuristic_gap": opt - sim["optimal_hits"] if sim else None,
        "simulator_lru_hits": sim["lru_hits"] if sim else None,
        "deterministic_seconds": entry["deterministic_seconds"],
    }


def check_whole_trace(section: Any, curve: PrefixCurve) -> dict[str, Any]:
    """Re-check the record's ``whole_trace`` (the simulator at its default budgets on the
    whole trace, hit tokens after its warm-up) against the prefix curve of the trace
    (``--weight tokens --warmup-fraction 0.5``, computed now): its warm-up, measured tokens and
    ceiling equal the curve's, each budget's block count is ``floor(budget / bytes per
    block)``, its LRU equals the curve at every budget of at least the longest request, and
    no figure exceeds the ceiling. Returns the figures; raises :class:`PrefixOptimaError`."""
    if not isinstance(section, dict) or not isinstance(section.get("points"), list):
        raise PrefixOptimaError("whole_trace: missing or not an object with points")
    problems = []
    fresh = {"warmup_requests": curve.warmup_requests, "measured_tokens": curve.measured,
             "ceiling_hit_tokens": curve.ceiling}
    problems += [f"whole_trace: {k} recorded {section.get(k)!r}, the prefix curve has {v}"
                 for k, v in fresh.items() if section.get(k) != v]
    bpb = section.get("bytes_per_block")
    if not (isinstance(bpb, int | float) and bpb > 0):
        raise PrefixOptimaError(f"whole_trace: bytes_per_block {bpb!r} is not positive")
    rows = []
    for i, pt in enumerate(section["points"]):
        keys = ("cache_blocks", "lru_hit_tokens", "optimal_hit_tokens")
        if not isinstance(pt, dict) or any(type(pt.get(k)) is not int for k in keys) or \
                not isinstance(pt.get("gib"), int | float):
            problems.append(f"whole_trace.points[{i}]: missing or mistyped")
            continue
        k = pt["cache_blocks"]
        if k != int(pt["gib"] * 2**30 // bpb):
            problems.append(f"whole_trace.points[{i}]: {k} blocks for {pt['gib']} GiB, not "
                            f"floor(budget / {bpb})")
        checked = k >= curve.longest
        if checked and pt["lru_hit_tokens"] != curve.at(k):
            problems.append(f"whole_trace.points[{i}]: simulator LRU {pt['lru_hit_tokens']} "
                            f"tokens at {k} blocks, the prefix curve {curve.at(k)}")
        for key in ("lru_hit_tokens", "optimal_hit_tokens"):
            if pt[key] > curve.ceiling:
                problems.append(f"whole_trace.points[{i}]: {key} {pt[key]} above the prefix "
                                f"ceiling {curve.ceiling}")
        rows.append({"gib": pt["gib"], "capacity": k,
                     "simulator_lru_hit_tokens": pt["lru_hit_tokens"],
                     "prefix_lru_hit_tokens": curve.at(k), "lru_checked_equal": checked,
                     "simulator_optimal_hit_tokens": pt["optimal_hit_tokens"],
                     "simulator_optimal_percent": _percent(pt["optimal_hit_tokens"],
                                                           curve.measured),
                     "prefix_lru_percent": _percent(curve.at(k), curve.measured)})
    if problems:
        raise PrefixOptimaError("; ".join(problems))
    return {
        "label": "The whole shared trace, prefix semantics in tokens, measured on the requests "
                 "after the first half (the simulator's warm-up): radix LRU exact at every "
                 "capacity (the prefix curve) beside the simulator's LRU and its optimal "
                 "heuristic at its default budgets (recorded)",
        "measured_tokens": curve.measured,
        "warmup_requests": curve.warmup_requests,
        "longest_request": curve.longest,
        "ceiling_hit_tokens": curve.ceiling,
        "ceiling_percent": _percent(curve.ceiling, curve.measured),
        "bytes_per_block": bpb,
        "budgets": rows,
    }


def _percent(hits: int, measured: int) -> str:
    return percent_str(Fraction(hits, measured)) if measured else "-"


@dataclass(frozen=True)
class PrefixOptimaEvidence:
    """The ``prefix_optima`` figures and the two files they come from (record, trace)."""

    figures: dict[str, Any]
    record_sha256: str
    trace_sha256: str


def prefix_optima_evidence(root: Path, trace: TraceRead | None = None
                           ) -> PrefixOptimaEvidence:
    """Re-check the committed record against the shared trace (read here unless given);
    raises :class:`PrefixOptimaError` naming the file if either is absent or a check
    fails."""
    record_path = Path(root) / PREFIX_OPTIMA_PATH
    trace_path = mooncake_trace(root)
    if trace is None:
        if not trace_path.is_file():
            raise PrefixOptimaError(f"{trace_path}: the Mooncake trace is absent "
                                    "(see data/mooncake/README.md)")
        try:
            trace = read_trace(trace_path)
        except TraceError as exc:
            raise PrefixOptimaError(str(exc)) from None
    record, record_sha = load_record(record_path)
    try:
        figures = check_record(record, trace)
        summary, curve = compute_prefix_curve(trace_path, "tokens", 0.5)
        if summary.sha256 != trace.sha256:
            raise PrefixOptimaError(f"{trace_path}: changed while it was read")
        figures["whole_trace"] = check_whole_trace(record.get("whole_trace"), curve)
    except PrefixOptimaError as exc:
        raise PrefixOptimaError(f"{record_path}: {exc}") from None
    return PrefixOptimaEvidence(figures, record_sha, trace.sha256)
