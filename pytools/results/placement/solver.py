"""The independent solver: a CP-SAT model of placement over time, an independent replay of its
schedule, and a concrete pooled policy.

* :func:`solve_placement`: ``x[k, i, j]`` says block ``j`` is resident in cache ``k`` just
  before that cache's ``i``-th request; caches start empty; between two requests a block can
  only stay or leave, except the block just requested, which may enter (demand fetch); every
  state respects the cache's capacity (sum of resident sizes); a request misses when its block
  is not resident. The objective is the number of misses. Pooled: one cache with the pooled
  capacity serves every request. Per-instance: one cache per host with its own capacity.
* :func:`check_schedule` replays a solver schedule independently (demand fetch, capacity,
  miss count), so a model bug (say a capacity constraint that is too loose) is caught.
* :func:`simulate_farthest` is a concrete pooled policy (demand fetch; evict the resident
  block whose next use is farthest, blocks never used again first).

Solve times vary from run to run and are printed by the CLI only, never put in figures.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytools.results.records import ortools_version

from .instance import Instance, PlacementError, host_walls, shared_blocks, wall

#: CP-SAT parameters: fixed seed and at most two workers, so runs are reproducible.
SOLVER_PARAMS: dict[str, Any] = {"num_workers": 2, "random_seed": 0, "max_time_in_seconds": 60.0}

#: Name of the independent solver.
SOLVER_NAME = "Google OR-Tools CP-SAT"


# --------------------------------------------------------------------------- the model


@dataclass(frozen=True)
class CacheRun:
    """One cache's schedule: the resident blocks before each of its requests, and after."""

    stream: tuple[int, ...]
    capacity: int
    states: tuple[frozenset[int], ...]  # len(stream) + 1 states; states[0] is empty

    def misses(self) -> int:
        return sum(1 for i, b in enumerate(self.stream) if b not in self.states[i])


@dataclass(frozen=True)
class Solve:
    """A CP-SAT solve: status, objective, best bound, and the schedule of each cache."""

    status: str
    objective: int
    bound: int
    runs: tuple[CacheRun, ...]
    wall_seconds: float  # reported by the CLI only; never a figure


def solve_placement(
    streams: Sequence[Sequence[int]],
    capacities: Sequence[int],
    sizes: Sequence[int],
    params: dict[str, Any] | None = None,
) -> Solve:
    """Minimise misses over all demand-fetch placements of independent caches.

    ``streams[k]`` is the block stream cache ``k`` serves, ``capacities[k]`` its capacity in
    KV pages. Only blocks a cache ever sees get variables (a cold demand-fetch cache can
    hold no other). Raises :class:`PlacementError` unless CP-SAT proves optimality.
    """
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    miss_terms: list[Any] = []
    resident: list[list[dict[int, Any]]] = []
    for k, (stream, cap) in enumerate(zip(streams, capacities, strict=True)):
        seen = sorted(set(stream))
        xs: list[dict[int, Any]] = []
        for i in range(len(stream) + 1):
            if i == 0:
                xs.append({j: model.new_constant(0) for j in seen})
            else:
                xs.append({j: model.new_bool_var(f"x_{k}_{i}_{j}") for j in seen})
        for i, b in enumerate(stream):
            for j in seen:
                if j != b:  # demand fetch: only the requested block may enter
                    model.add_implication(xs[i + 1][j], xs[i][j])
            model.add(sum(sizes[j] * xs[i + 1][j] for j in seen) <= cap)
            miss_terms.append(1 - xs[i][b])
        resident.append(xs)
    model.minimize(sum(miss_terms))
    solver = cp_model.CpSolver()
    for key, value in (params or SOLVER_PARAMS).items():
        setattr(solver.parameters, key, value)
    start = time.perf_counter()
    code = solver.solve(model)
    elapsed = time.perf_counter() - start
    status = solver.status_name(code)
    if status != "OPTIMAL":
        raise PlacementError(f"CP-SAT did not prove optimality: status {status}")
    runs = []
    for xs, stream, cap in zip(resident, streams, capacities, strict=True):
        states = tuple(
            frozenset(j for j, v in layer.items() if solver.boolean_value(v)) for layer in xs
        )
        runs.append(CacheRun(tuple(stream), cap, states))
    return Solve(
        status=status,
        objective=round(solver.objective_value),
        bound=round(solver.best_objective_bound),
        runs=tuple(runs),
        wall_seconds=elapsed,
    )


def check_schedule(run: CacheRun, sizes: Sequence[int], capacity: int) -> int:
    """Replay one cache's schedule independently of the model; return its misses.

    ``capacity`` comes from the instance, not from the schedule. Checks the cold start,
    demand fetch (only the block just requested may enter) and the capacity of every state.
    Raises :class:`PlacementError` on the first violation.
    """
    if len(run.states) != len(run.stream) + 1:
        raise PlacementError("schedule: wrong number of states")
    if run.states[0]:
        raise PlacementError("schedule: the cache does not start empty")
    for i, state in enumerate(run.states):
        used = sum(sizes[j] for j in state)
        if used > capacity:
            raise PlacementError(
                f"schedule: state {i} holds {used} pages, over the capacity {capacity}"
            )
        if i > 0:
            entered = state - run.states[i - 1] - {run.stream[i - 1]}
            if entered:
                raise PlacementError(
                    f"schedule: blocks {sorted(entered)} entered at step {i} without a request"
                )
    return run.misses()


def check_solve(result: Solve, sizes: Sequence[int], capacities: Sequence[int]) -> None:
    """Check every schedule of a solve against the instance's sizes and capacities, that
    their misses add up to the objective, and that the bound equals the objective."""
    if len(result.runs) != len(capacities):
        raise PlacementError(f"{len(result.runs)} schedules for {len(capacities)} caches")
    total = sum(
        check_schedule(run, sizes, cap) for run, cap in zip(result.runs, capacities, strict=True)
    )
    if total != result.objective:
        raise PlacementError(
            f"schedule misses {total} differ from the solver's objective {result.objective}"
        )
    if result.bound != result.objective:
        raise PlacementError(f"bound {result.bound} differs from objective {result.objective}")


def simulate_farthest(sizes: Sequence[int], stream: Sequence[int], capacity: int) -> CacheRun:
    """A concrete demand-fetch policy: fetch on a miss, then evict farthest-next-use first.

    Blocks never requested again go first (ties: larger size, then lower id). A block larger
    than the whole capacity is served without being kept.
    """
    states = [frozenset()]
    cache: set[int] = set()
    for t, b in enumerate(stream):
        cache.add(b)

        def next_use(j: int, t: int = t) -> int:
            for u in range(t + 1, len(stream)):
                if stream[u] == j:
                    return u
            return len(stream)

        while sum(sizes[j] for j in cache) > capacity:
            victim = max(cache, key=lambda j: (next_use(j), sizes[j], -j))
            cache.discard(victim)
        states.append(frozenset(cache))
    return CacheRun(tuple(stream), capacity, tuple(states))


# --------------------------------------------------------------------------- results


def solve_pooled(inst: Instance, params: dict[str, Any] | None = None) -> Solve:
    """CP-SAT optimum of one pooled cache (pooled capacity) serving every request."""
    return solve_placement([inst.stream], [inst.pooled_capacity], inst.block_sizes, params)


def solve_per_instance(inst: Instance, params: dict[str, Any] | None = None) -> Solve:
    """CP-SAT optimum of per-instance caches: host ``h``'s cache serves only its requests."""
    streams = [inst.on_host(h) for h in range(inst.hosts)]
    return solve_placement(streams, list(inst.host_capacity), inst.block_sizes, params)


@dataclass(frozen=True)
class Certificate:
    """Everything the result's figures are made of, for one instance."""

    figures: dict[str, Any]
    pooled_seconds: float
    per_instance_seconds: float


def certify_instance(inst: Instance) -> Certificate:
    """Solve both placements, cross-check them, and return the figures.

    Raises :class:`PlacementError` when the solver is not optimal, a schedule fails the
    independent replay, the pooled optimum misses the wall, or per-instance caching does
    not exceed the wall although a block is shared.
    """
    stream = inst.stream
    w = wall(stream)
    pooled = solve_pooled(inst)
    check_solve(pooled, inst.block_sizes, [inst.pooled_capacity])
    per = solve_per_instance(inst)
    check_solve(per, inst.block_sizes, inst.host_capacity)
    sim = simulate_farthest(inst.block_sizes, stream, inst.pooled_capacity)
    sim_misses = check_schedule(sim, inst.block_sizes, inst.pooled_capacity)
    hw = host_walls(inst)
    shared = shared_blocks(inst)
    if pooled.objective != w:
        raise PlacementError(f"pooled optimum {pooled.objective} is not the wall {w}")
    if sim_misses != w:
        raise PlacementError(f"pooled farthest-next-use misses {sim_misses}, not the wall {w}")
    if not w <= hw <= per.objective:
        raise PlacementError(
            f"per-instance optimum {per.objective} below the Lean floor {hw} (wall {w})"
        )
    if shared and not per.objective > w:
        raise PlacementError("a block is shared across hosts but per-instance reached the wall")
    n = len(stream)
    distinct_pages = sum(inst.block_sizes[b] for b in set(stream))
    figures = {
        "status": pooled.status,
        "objective": pooled.objective,
        "bound": pooled.bound,
        "wall": w,
        "pooled_misses": sim_misses,
        "pooled_policy": "demand fetch, evict farthest next use (offline)",
        "per_instance_status": per.status,
        "per_instance_misses": per.objective,
        "per_instance_bound": per.bound,
        "host_walls": hw,
        "shared_blocks": len(shared),
        "requests": n,
        "hosts": inst.hosts,
        "distinct_blocks": w,
        "distinct_pages": distinct_pages,
        "pooled_capacity_pages": inst.pooled_capacity,
        "host_capacity_pages": list(inst.host_capacity),
        "pooled_hit_rate": hit_rate(n - pooled.objective, n),
        "per_instance_hit_rate": hit_rate(n - per.objective, n),
        "solver": SOLVER_NAME,
        "solver_version": ortools_version(),
        "solver_params": {k: SOLVER_PARAMS[k] for k in ("num_workers", "random_seed")},
    }
    return Certificate(figures, pooled.wall_seconds, per.wall_seconds)


def hit_rate(num: int, den: int) -> float:
    """A hit rate rounded to 6 places (0 for an empty stream)."""
    return round(num / den, 6) if den else 0.0
