"""The exact optimum of prefix (radix) caches on windows of the shared Mooncake trace: the
CP-SAT solves and the trace authors' simulator at the same capacities, made once into the
committed record (``pytools ceiling prefix-optima``).

The model, the windows and what certify re-checks are in :mod:`.prefix_optima_record`.

**CP-SAT.** One boolean ``keep[I]`` per reuse interval ``I = (p, q)`` of a block ``b``
(requests ``p < q`` consecutive among those containing ``b``). Prefix closure: if ``b``'s
parent is ``a``, every request containing ``b`` contains ``a``, so ``a``'s reuse intervals
between ``p`` and ``q`` tile ``[p, q]``; ``keep[I]`` implies each of them kept. The capacity,
a running count: ``load_t = load_{t-1} - kept intervals ending at t + kept intervals starting
at t``, ``0 <= load_t <= capacity``. Maximise the kept intervals. Every assignment meeting
these is a run of the model with that many hits (its states: the kept intervals alive; a
block enters only at a request containing it; closure by the implications; under closure
a request's held blocks are a leading run, each a kept interval ending there), and every run
gives an assignment at least as good (keep ``(p, q)`` when request ``q`` hits ``b``: then
``b`` was held throughout, and so was its parent), so the optimum is the model's.

**The simulator** (``kvcache-simulator``, installed by ``.ci/kvsim/install.sh``) measures only
the requests after the first half, and only once its cache has filled in that first half. So
each window is given to it behind *filler* requests: as many requests as the window, of fresh
ids never used again (chains of ``ceil(capacity / requests)`` blocks), that fill its cache
with dead blocks in its warm-up, which its ``optimal`` (farthest next request first) and its
LRU (least recently used first) evict before any block of the window; every block of the
window is given 512 tokens (``input_length = 512 x blocks``), so its hit tokens / 512 are
the hits in blocks. Its budget is ``(capacity + 1/2)`` blocks' bytes; the block count it
reports is recorded and certify checks it equals the capacity.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from pytools.results.records import ortools_version

from .prefix_model import (
    PrefixIntervals,
    PrefixOptimaError,
    capacity_of,
    encode_kept,
    prefix_intervals,
    replay_kept,
    window_facts,
    window_requests,
)
from .prefix_optima_record import MODEL, OPTIMAL, RECORD_FORMAT

#: CP-SAT parameters: one worker, a fixed seed; the limit is added per solve in CP-SAT's
#: deterministic time (work counted, not seconds: the same point on any load).
PREFIX_PARAMS: dict[str, Any] = {"num_workers": 1, "random_seed": 0}

#: Wall-clock seconds a solve may take, per deterministic second of its limit (a backstop).
WALL_BACKSTOP = 100

#: The simulator's model for sizing (bytes per block): the one its README uses.
SIM_MODEL = "deepseek-v3"

#: Tokens a block holds in the windows given to the simulator.
SIM_BLOCK_TOKENS = 512


@dataclass(frozen=True)
class PrefixSolve:
    """A CP-SAT solve: status, objective and best bound (hits), the kept intervals, the
    solver's wall time and deterministic time."""

    status: str
    objective: int | None
    bound: int
    kept: tuple[bool, ...] | None
    wall_seconds: float
    deterministic_seconds: float


def solve_prefix(requests: Sequence[Sequence[int]], capacity: int, time_limit: float,
                 params: dict[str, Any] | None = None,
                 iv: PrefixIntervals | None = None) -> PrefixSolve:
    """Maximise the prefix hits (blocks) of a cache of ``capacity`` blocks on ``requests``
    from an empty cache (the model of the module docstring), within ``time_limit``
    deterministic seconds. Does not raise when the solver stops early: the status says what
    was proved."""
    from ortools.sat.python import cp_model

    if capacity < 0:
        raise PrefixOptimaError(f"capacity must be non-negative, got {capacity}")
    iv = iv or prefix_intervals(requests)
    model = cp_model.CpModel()
    keep = [model.new_bool_var(f"keep_{i}") for i in range(len(iv.blocks))]
    by_block: dict[int, list[int]] = {}
    for i, b in enumerate(iv.blocks):
        by_block.setdefault(b, []).append(i)
    for i, b in enumerate(iv.blocks):
        a = iv.parent[b]
        if a < 0:
            continue
        for j in by_block[a]:  # the parent's intervals inside [start, end] (they tile it)
            if iv.starts[i] <= iv.starts[j] and iv.ends[j] <= iv.ends[i]:
                model.add_implication(keep[i], keep[j])
    change: list[list[Any]] = [[] for _ in range(iv.requests)]
    for i, k in enumerate(keep):
        change[iv.starts[i]].append(k)
        change[iv.ends[i]].append(-k)
    load: Any = 0  # kept intervals alive after the previous request
    for t in range(iv.requests):
        if not change[t]:
            continue
        after = model.new_int_var(0, capacity, f"load_{t}")
        model.add(after == load + sum(change[t]))
        load = after
    model.maximize(cp_model.LinearExpr.sum(keep))
    solver = cp_model.CpSolver()
    for key, value in {**(PREFIX_PARAMS if params is None else params),
                       "max_deterministic_time": float(time_limit),
                       "max_time_in_seconds": WALL_BACKSTOP * float(time_limit)}.items():
        setattr(solver.parameters, key, value)
    start = time.perf_counter()
    code = solver.solve(model)
    wall = time.perf_counter() - start
    status = solver.status_name(code)
    found = status in (OPTIMAL, "FEASIBLE")
    return PrefixSolve(status, round(solver.objective_value) if found else None,
                       round(solver.best_objective_bound),
                       tuple(bool(solver.boolean_value(k)) for k in keep) if found else None,
                       wall, solver.response_proto.deterministic_time)


# --------------------------------------------------------------------------- the simulator


def simulator_input(requests: Sequence[Sequence[int]], capacity: int) -> str:
    """The JSONL the simulator is given for a window (see the module docstring): filler
    requests of fresh ids, then the window's requests, every block of 512 tokens."""
    fresh = max((b for r in requests for b in r), default=-1) + 1
    per = max(1, -(-capacity // max(1, len(requests))))
    lines = []
    for _ in requests:
        ids = list(range(fresh, fresh + per))
        fresh += per
        lines.append({"input_length": SIM_BLOCK_TOKENS * per, "hash_ids": ids})
    lines += [{"input_length": SIM_BLOCK_TOKENS * len(r), "hash_ids": list(r)}
              for r in requests]
    return "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines)


@dataclass(frozen=True)
class Simulator:
    """How to run ``kvcache-simulator``: its venv's Python and its bytes per block."""

    python: Path
    bytes_per_block: float

    def run(self, requests: Sequence[Sequence[int]], capacity: int) -> dict[str, int]:
        """Its ``optimal`` and LRU on the window at ``capacity`` blocks, hits in blocks."""
        gib = (capacity + 0.5) * self.bytes_per_block / 2**30
        with tempfile.TemporaryDirectory(prefix="prefix-optima-") as tmp:
            trace, out = Path(tmp) / "w.jsonl", Path(tmp) / "r.json"
            trace.write_text(simulator_input(requests, capacity), encoding="ascii")
            proc = subprocess.run(
                [str(self.python), "-m", "kvcache_sim", "run", "--trace", str(trace),
                 "--model", SIM_MODEL, "--block-size", str(SIM_BLOCK_TOKENS), "--policies",
                 "lru,optimal", "--budgets-gib", repr(gib), "--format", "json",
                 "--no-progress", "--output", str(out)],
                capture_output=True, text=True, timeout=600, check=False)
            if proc.returncode != 0:
                raise PrefixOptimaError(f"kvcache-simulator failed: {proc.stderr.strip()}")
            result = json.loads(out.read_text())
        points = result["points"]
        if len(points) != 1:
            raise PrefixOptimaError(f"kvcache-simulator measured no point at {capacity} "
                                    "blocks (underfilled?)")
        point = points[0]
        figures = {"cache_blocks": int(point["cacheBlocks"])}
        for name, key in (("optimal", "optimal_hits"), ("lru", "lru_hits")):
            tokens = int(point["results"][name]["hitTokens"])
            if tokens % SIM_BLOCK_TOKENS:
                raise PrefixOptimaError(f"kvcache-simulator {name}: {tokens} hit tokens, not "
                                        "whole blocks")
            figures[key] = tokens // SIM_BLOCK_TOKENS
        return figures


    def whole_trace(self, trace: Path, trace_name: str) -> dict[str, Any]:
        """Its LRU and ``optimal`` on the whole trace at its default budgets, as it reports
        them (hit tokens, its warm-up: the first half of the requests)."""
        with tempfile.TemporaryDirectory(prefix="prefix-optima-") as tmp:
            out = Path(tmp) / "r.json"
            proc = subprocess.run(
                [str(self.python), "-m", "kvcache_sim", "run", "--trace", str(trace),
                 "--model", SIM_MODEL, "--block-size", str(SIM_BLOCK_TOKENS), "--policies",
                 "lru,optimal", "--format", "json", "--no-progress", "--output", str(out)],
                capture_output=True, text=True, timeout=600, check=False)
            if proc.returncode != 0:
                raise PrefixOptimaError(f"kvcache-simulator failed: {proc.stderr.strip()}")
            result = json.loads(out.read_text())
        meta = result["metadata"]
        return {
            "trace": trace_name,
            "bytes_per_block": meta["bytesPerBlock"],
            "warmup_requests": meta["warmupRequests"],
            "measured_tokens": meta["totalMeasuredTokens"],
            "ceiling_hit_tokens": result["ceiling"]["hitTokens"],
            "points": [{"gib": pt["gib"], "cache_blocks": pt["cacheBlocks"],
                        "lru_hit_tokens": pt["results"]["lru"]["hitTokens"],
                        "optimal_hit_tokens": pt["results"]["optimal"]["hitTokens"]}
                       for pt in result["points"]],
        }


def find_simulator(python: Path) -> tuple[Simulator, dict[str, Any]]:
    """The simulator of the venv whose Python is ``python``, and how the record names it."""
    code = ("import json, importlib.metadata as md\n"
            "from kvcache_sim.calculator import calculate_cache_size, load_models_data, "
            "models_by_id\n"
            "d = load_models_data()\n"
            f"c = calculate_cache_size(models_by_id(d)[{SIM_MODEL!r}], tokens=1, "
            f"block_size={SIM_BLOCK_TOKENS}, models_data=d)\n"
            f"print(json.dumps([md.version('kvcache-simulator'), c.bytes_per_block or "
            f"c.bytes_per_token * {SIM_BLOCK_TOKENS}]))\n")
    try:
        proc = subprocess.run([str(python), "-c", code], capture_output=True, text=True,
                              timeout=120, check=False)
    except OSError as exc:
        raise PrefixOptimaError(f"{python}: no kvcache-simulator ({exc.strerror or exc}): "
                                "run bash .ci/kvsim/install.sh") from None
    if proc.returncode != 0:
        raise PrefixOptimaError(f"{python}: no kvcache-simulator "
                                f"({proc.stderr.strip().splitlines()[-1:]}): run "
                                "bash .ci/kvsim/install.sh")
    version, bpb = json.loads(proc.stdout)
    sim = Simulator(Path(python), float(bpb))
    return sim, {"name": "kvcache-simulator", "version": version, "model": SIM_MODEL,
                 "bytes_per_block": float(bpb),
                 "method": "each window behind as many filler requests of fresh, never "
                           "reused ids (filling its cache in its warm-up), every block 512 "
                           "tokens; its optimal and lru policies; hits = hit tokens / 512"}


# --------------------------------------------------------------------------- the ladder


@dataclass(frozen=True)
class Ladder:
    """Windows from each line of ``starts``: ``first_lines`` lines, then ``growth`` times
    as many, ... up to ``max_lines`` (or the trace's end); each at ``fraction`` of its prefix
    wall capacity, within ``time_limit`` deterministic seconds."""

    starts: tuple[int, ...] = (1,)
    first_lines: int = 32
    growth: int = 2
    max_lines: int | None = 1024
    fraction: Fraction = Fraction(1, 2)
    time_limit: float = 10.0

    def __post_init__(self) -> None:
        if not self.starts or min(self.starts) < 1 or self.first_lines < 1 or \
                self.growth < 2:
            raise PrefixOptimaError("ladder: need start lines >= 1, first_lines >= 1, "
                                    "growth >= 2")
        if not 0 <= self.fraction < 1:
            raise PrefixOptimaError(f"ladder: the fraction {self.fraction} is not in [0, 1)")
        if not self.time_limit > 0:
            raise PrefixOptimaError(f"ladder: the time limit {self.time_limit} is not "
                                    "positive")

    def windows(self, lines: int, first_line: int) -> list[tuple[int, int]]:
        """The windows from ``first_line`` inside a trace of ``lines`` lines."""
        top = lines - first_line + 1
        if self.max_lines is not None:
            top = min(top, self.max_lines)
        out, size = [], self.first_lines
        while top >= 1:
            size = min(size, top)
            out.append((first_line, first_line + size - 1))
            if size == top:
                break
            size *= self.growth
        return out


def solve_window(requests: Sequence[Sequence[int]], first_line: int, last_line: int,
                 ladder: Ladder, params: dict[str, Any],
                 simulator: Simulator | None) -> dict[str, Any]:
    """Solve one window (and run the simulator on it when given); its record entry. The
    solution is replayed (:func:`.prefix_optima_record.replay_kept`) before it is recorded."""
    iv = prefix_intervals(requests)
    facts = window_facts(requests, iv)
    capacity = capacity_of(facts.prefix_wall_capacity, ladder.fraction)
    result = solve_prefix(requests, capacity, ladder.time_limit, params, iv)
    if result.kept is not None:
        replayed = replay_kept(requests, capacity, iv, result.kept)
        if replayed != result.objective:
            raise PrefixOptimaError(f"window {first_line}:{last_line}: the solution replays "
                                    f"to {replayed} hits, the objective is {result.objective}")
    sim = (simulator.run(requests, capacity)
           if simulator is not None and result.status == OPTIMAL else None)
    return {
        "first_line": first_line,
        "last_line": last_line,
        **facts.__dict__,
        "capacity": capacity,
        "status": result.status,
        "objective": result.objective,
        "bound": result.bound,
        "kept": encode_kept(result.kept) if result.kept is not None else None,
        "solve_seconds": round(result.wall_seconds, 3),
        "deterministic_seconds": round(result.deterministic_seconds, 3),
        "simulator": sim,
    }


def run_ladder(requests: Sequence[Sequence[int]], trace_sha256: str, trace_name: str,
               ladder: Ladder, simulator: tuple[Simulator, dict[str, Any]] | None,
               report: Callable[[dict[str, Any]], None] | None = None,
               params: dict[str, Any] | None = None) -> dict[str, Any]:
    """From each start line, solve the ladder's windows until one is not OPTIMAL; the
    record. Windows whose capacity would be 0 are skipped. Raises :class:`PrefixOptimaError`
    when none is proved OPTIMAL."""
    params = dict(PREFIX_PARAMS if params is None else params)
    start = time.perf_counter()
    solved: list[dict[str, Any]] = []
    stopped: list[dict[str, Any]] = []
    for first_line in ladder.starts:
        for first, last in ladder.windows(len(requests), first_line):
            window = window_requests(requests, first, last)
            facts = window_facts(window, prefix_intervals(window))
            if capacity_of(facts.prefix_wall_capacity, ladder.fraction) == 0:
                continue
            entry = solve_window(window, first, last, ladder, params,
                                 simulator[0] if simulator else None)
            if report is not None:
                report(entry)
            if entry["status"] != OPTIMAL:
                stopped.append(entry)
                break
            solved.append(entry)
    if not solved:
        raise PrefixOptimaError("no window of the ladder was proved OPTIMAL")
    return {
        "format": RECORD_FORMAT,
        "trace": {"path": trace_name, "sha256": trace_sha256},
        "model": MODEL,
        "capacity_fraction": [ladder.fraction.numerator, ladder.fraction.denominator],
        "ladder": {"starts": list(ladder.starts), "first_lines": ladder.first_lines,
                   "growth": ladder.growth, "max_lines": ladder.max_lines},
        "time_limit_deterministic_seconds": ladder.time_limit,
        "solver": {"name": "CP-SAT", "version": ortools_version(), "params": params},
        "simulator": simulator[1] if simulator else None,
        "solved": solved,
        "not_proved": stopped,
        "total_seconds": round(time.perf_counter() - start, 3),
    }
