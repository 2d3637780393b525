"""The exact demand-fetch optimum of one cache of unit-size blocks, by CP-SAT on the intervals
between consecutive uses of a block (the *interval model*), and an independent replay.

Semantics (``KVCache.Placement`` in ``Proofs/Placement/Wall.lean``: ``Policy``,
``DemandFetch``, ``misses``, ``FitsIn``): a cache starts empty; after serving request ``t``
(for block ``b_t``) it holds only ``b_t`` and blocks it held before (demand fetch; it may
evict any number of blocks at any time, and may decline to store ``b_t``: bypass); every
state holds at most ``capacity`` blocks; request ``t`` misses when ``b_t`` is not held just
before it. ``Proofs/Placement/Optimal.lean`` proves Belady with bypass the optimum of exactly
this class, at every capacity.

The interval model. For a block requested at positions ``p_1 < ... < p_m``, call
``(p_i, p_{i+1})`` a *reuse interval*. One boolean ``keep[I]`` per reuse interval; the state
after request ``t`` is the set of blocks whose reuse interval ``I = (p, q)`` has
``p <= t < q`` and ``keep[I]``; each such state holds at most ``capacity`` blocks; the
objective is ``distinct + #{I : not keep[I]}``. Its optimum is the demand-fetch optimum:

* every assignment meeting the constraints is a demand-fetch run with that many misses: a
  block enters the state after ``t`` only if its interval starts at ``t``, i.e. it is
  ``b_t``; request ``q`` hits exactly when the interval ending at ``q`` is kept (a first
  request always misses: the cache starts empty);
* every demand-fetch run fitting the capacity gives an assignment at least as good: keep
  ``I = (p, q)`` when request ``q`` hits. A block held just before ``q`` cannot have entered
  after ``p`` (it was not requested in between), so it was held in every state from the one
  after ``p`` to the one before ``q``; the assignment's states are thus subsets of the run's
  (capacity holds) and it misses exactly as often.

The capacity is stated as a running count (a flow): ``load_t = load_{t-1} - keep[I ending at
t] + keep[I starting at t]`` with ``0 <= load_t <= capacity`` (``load`` before the first
request is 0). By induction ``load_t`` is the number of kept intervals alive in the state
after request ``t``, so its domain is the capacity constraint of that state; a request that
neither ends nor starts an interval leaves the state unchanged and gets no variable. This is
``O(references)`` variables and three-term constraints, where listing each state's intervals
is quadratic. The constraint matrix of "each state holds at most ``capacity`` kept
intervals" has consecutive ones in each column (an interval matrix, totally unimodular), so
the linear relaxation is integral and CP-SAT's LP bound is the optimum; CP-SAT's LP-guided
search (``LP_SEARCH``) then finds a schedule that meets it. The full model over
``x[block, t]`` (:func:`.solver.solve_placement`) needs a variable per block and step; the
tests check both against brute force and against Belady with bypass.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .instance import PlacementError

#: CP-SAT's status when the objective equals the proved bound.
OPTIMAL = "OPTIMAL"

#: CP-SAT parameters of the interval model: one worker, a fixed seed, every linear constraint
#: in the LP from the start, and LP-guided branching (the LP is integral, see above). Enum
#: values are given by name. The time limit is added per solve, in CP-SAT's deterministic
#: time (``max_deterministic_time``: work counted, not seconds elapsed, so a solve stops at
#: the same point on a busy machine and on an idle one), with a wall-clock backstop of
#: :data:`WALL_BACKSTOP` times as many seconds.
PAGING_PARAMS: dict[str, Any] = {
    "num_workers": 1,
    "random_seed": 0,
    "search_branching": "LP_SEARCH",
    "add_lp_constraints_lazily": False,
}

#: Wall-clock seconds a solve may take, per deterministic second of its limit (a backstop).
WALL_BACKSTOP = 100


@dataclass(frozen=True)
class Intervals:
    """The reuse intervals of a stream of ``length`` requests for ``distinct`` blocks:
    ``starts[i] < ends[i]`` are consecutive positions requesting one block."""

    length: int
    distinct: int
    starts: tuple[int, ...]
    ends: tuple[int, ...]


def reuse_intervals(stream: Sequence[int]) -> Intervals:
    """The reuse intervals of ``stream`` in order of their start."""
    last: dict[int, int] = {}
    starts: list[int] = []
    ends: list[int] = []
    previous: list[int] = [-1] * len(stream)
    for t, block in enumerate(stream):
        previous[t] = last.get(block, -1)
        last[block] = t
    pairs = sorted((p, q) for q, p in enumerate(previous) if p >= 0)
    for p, q in pairs:
        starts.append(p)
        ends.append(q)
    return Intervals(len(stream), len(last), tuple(starts), tuple(ends))


def alive_counts(iv: Intervals) -> list[int]:
    """``result[t]``: the reuse intervals alive in the state after request ``t`` (started at
    or before ``t``, ending after it): what that state holds if every interval is kept."""
    delta = [0] * (iv.length + 1)
    for p, q in zip(iv.starts, iv.ends, strict=True):
        delta[p] += 1
        delta[q] -= 1
    alive, running = [], 0
    for change in delta[:-1]:
        running += change
        alive.append(running)
    return alive


def wall_capacity(stream: Sequence[int]) -> int:
    """The least capacity at which a demand-fetch cache (with bypass) misses only once per
    distinct block on ``stream``: the most reuse intervals alive in one state. Keeping every
    interval fits exactly from this capacity on; below it some interval is dropped, so the
    optimum is above the wall."""
    return max(alive_counts(reuse_intervals(stream)), default=0)


@dataclass(frozen=True)
class PagingSolve:
    """A CP-SAT solve of the interval model: status, objective and best bound (misses),
    which reuse intervals are kept, the solver's wall time and its deterministic time (the
    work it counts, what the limit bounds)."""

    status: str
    objective: int | None
    bound: int
    kept: tuple[bool, ...] | None
    wall_seconds: float
    deterministic_seconds: float
    intervals: int
    constraints: int


def solve_paging(stream: Sequence[int], capacity: int, time_limit: float,
                 params: dict[str, Any] | None = None) -> PagingSolve:
    """Minimise the misses of a demand-fetch cache of ``capacity`` unit blocks on ``stream``
    (bypass allowed), with the interval model, CP-SAT parameters ``params`` (default
    :data:`PAGING_PARAMS`) and a limit of ``time_limit`` deterministic seconds.

    Does not raise when the solver stops early: the status says what was proved (OPTIMAL:
    the objective equals the bound); ``objective`` and ``kept`` are ``None`` when no
    solution was found.
    """
    from ortools.sat.python import cp_model

    if capacity < 0:
        raise PlacementError(f"capacity must be non-negative, got {capacity}")
    iv = reuse_intervals(stream)
    alive = alive_counts(iv)
    model = cp_model.CpModel()
    keep = [model.new_bool_var(f"keep_{i}") for i in range(len(iv.starts))]
    starting = {p: i for i, p in enumerate(iv.starts)}
    ending = {q: i for i, q in enumerate(iv.ends)}
    load: Any = 0  # kept intervals alive in the state after the previous request
    constraints = 0
    for t in range(len(stream)):
        change = []
        if t in ending:
            change.append(-keep[ending[t]])
        if t in starting:
            change.append(keep[starting[t]])
        if not change:
            continue
        after = model.new_int_var(0, min(capacity, alive[t]), f"load_{t}")
        model.add(after == load + sum(change))
        load = after
        constraints += 1
    model.minimize(iv.distinct + len(keep) - cp_model.LinearExpr.sum(keep))
    solver = cp_model.CpSolver()
    for key, value in {**(PAGING_PARAMS if params is None else params),
                       "max_deterministic_time": float(time_limit),
                       "max_time_in_seconds": WALL_BACKSTOP * float(time_limit)}.items():
        setattr(solver.parameters, key, _param_value(cp_model, key, value))
    start = time.perf_counter()
    code = solver.solve(model)
    elapsed = time.perf_counter() - start
    status = solver.status_name(code)
    found = status in (OPTIMAL, "FEASIBLE")
    return PagingSolve(
        status=status,
        objective=round(solver.objective_value) if found else None,
        bound=round(solver.best_objective_bound),
        kept=tuple(bool(solver.boolean_value(k)) for k in keep) if found else None,
        wall_seconds=elapsed,
        deterministic_seconds=solver.response_proto.deterministic_time,
        intervals=len(keep),
        constraints=constraints,
    )


def _param_value(cp_model: Any, key: str, value: Any) -> Any:
    """A parameter's value as CP-SAT takes it: enum values are given by name."""
    if key == "search_branching" and isinstance(value, str):
        try:
            return getattr(cp_model, value)
        except AttributeError:
            raise PlacementError(f"unknown CP-SAT search_branching {value!r}") from None
    return value


def replay_kept(stream: Sequence[int], capacity: int, kept: Sequence[bool]) -> int:
    """Replay the schedule that keeps exactly the reuse intervals ``kept`` (in
    :func:`reuse_intervals`' order), independently of the model: a cold cache, demand
    fetch, at most ``capacity`` blocks in every state; return its misses.

    Raises :class:`PlacementError` when some state holds more than ``capacity`` blocks.
    """
    iv = reuse_intervals(stream)
    if len(kept) != len(iv.starts):
        raise PlacementError(f"{len(kept)} decisions for {len(iv.starts)} reuse intervals")
    keep_until: dict[int, int] = {}  # start position -> end position, for kept intervals
    for p, q, k in zip(iv.starts, iv.ends, kept, strict=True):
        if k:
            keep_until[p] = q
    cache: set[int] = set()
    misses = 0
    for t, block in enumerate(stream):
        if block not in cache:
            misses += 1
        cache.discard(block)
        if t in keep_until:  # demand fetch: only the requested block may enter
            cache.add(block)
        if len(cache) > capacity:
            raise PlacementError(f"state after request {t} holds {len(cache)} blocks, over "
                                 f"the capacity {capacity}")
    return misses
