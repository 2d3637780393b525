"""Pooled KV placement is optimal: a CP-SAT certificate on a committed serving instance.

The Lean side (``Proofs/Placement/Wall.lean``, namespace ``KVCache.Placement``) proves, for
every routing, every demand-fetch policy, every capacity and every trace, that a cache
started cold misses at least once per distinct block (*the wall*), that per-instance caches
(one per host, each serving only its own requests) miss at least the sum over hosts of the
distinct blocks each host sees, and that this sum exceeds the wall as soon as one block is
requested on two hosts. This module checks the same story on one concrete instance with an
independent solver, Google OR-Tools CP-SAT:

* :func:`generate_instance` builds a serving instance deterministically from a seed (block
  sizes in KV pages, a Zipf-like request stream, a random cache-unaware routing, a pooled
  capacity equal to the largest "live" working set — blocks already seen and needed again —
  and the same total memory split evenly across the hosts). The committed instance
  ``data/placement/instance.json`` is its output for :data:`INSTANCE_PARAMS`; the file records
  those parameters and :func:`check_instance_generated` regenerates it byte for byte.
* :func:`solve_placement` is a CP-SAT model of placement over time: ``x[k, i, j]`` says block
  ``j`` is resident in cache ``k`` just before that cache's ``i``-th request; caches start
  empty; between two requests a block can only stay or leave, except the block just
  requested, which may enter (demand fetch); every state respects the cache's capacity
  (sum of resident sizes); a request misses when its block is not resident. The objective is
  the number of misses. Pooled: one cache with the pooled capacity serves every request.
  Per-instance: one cache per host with its own capacity serves its own requests.
* :func:`check_schedule` replays a solver schedule independently (demand fetch, capacity,
  miss count), so a model bug (say a capacity constraint that is too loose) is caught.
* :func:`simulate_farthest` is a concrete pooled policy (demand fetch; evict the resident
  block whose next use is farthest, blocks never used again first); its misses are the
  "pooled cache's misses" reported next to the solver's optimum and the wall.
* :func:`sweep` runs 1..16 hosts on one stream (seed :data:`SWEEP_PARAMS`), pooled against
  per-instance hit rates; :func:`write_sweep` writes the table (CSV) and a byte-deterministic
  SVG plot.
* :func:`evidence` gives the figures of the published result ``pooled-placement``.

Solve times vary from run to run and are printed by the CLI only, never put in figures.
"""

from __future__ import annotations

import csv
import io
import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from pytools.canonical import atomic_write_bytes
from pytools.paths import project_root, sha256_file
from pytools.results import Evidence, InputFile

#: Id of the published result whose evidence :func:`evidence` computes.
RESULT_ID = "pooled-placement"

#: Title of the published result.
RESULT_TITLE = "Pooled KV placement reaches the compulsory-miss wall; per-instance caching cannot"

#: Fully qualified Lean theorems the result rests on (Proofs/Placement/Wall.lean).
THEOREMS: tuple[str, ...] = (
    "KVCache.Placement.wall_le_misses",
    "KVCache.Placement.wall_le_pooledMisses",
    "KVCache.Placement.hostWalls_le_perInstanceMisses",
    "KVCache.Placement.wall_le_perInstanceMisses",
    "KVCache.Placement.wall_lt_hostWalls_of_shared",
    "KVCache.Placement.wall_lt_perInstanceMisses_of_shared",
    "KVCache.Placement.keepAll_misses_eq_wall",
    "KVCache.Placement.keepAll_fitsIn_of_wall_le",
    "KVCache.Placement.pooled_reaches_wall",
    "KVCache.Placement.pooled_optimum_eq_wall",
    "KVCache.Placement.perInstance_keepAll_eq_hostWalls",
    "KVCache.Placement.pooled_lt_perInstance_of_shared",
)

#: The limits stated next to the result.
RESULT_LIMITS: tuple[str, ...] = (
    "The CP-SAT optimum is certified for one committed, synthetic instance as modelled "
    "(its SHA-256 is recorded), not for a production fleet; it is not a benchmark.",
    "Model: demand fetch from a cold cache, sizes in KV pages, capacity on the resident "
    "pages between requests; no prefetch, no latency, bandwidth or recomputation cost, "
    "no partial blocks, no replication or migration between caches.",
    "Per-instance caches get the same total memory as the pooled cache, split evenly "
    "across hosts; the routing is random and cache-unaware (a cache-aware router would "
    "reduce, not remove, the gap).",
    "The Lean theorems count blocks, not sizes: the lower bounds (misses >= wall, "
    "per-instance >= sum of per-host distinct blocks > wall when a block is shared) hold "
    "for every routing, policy, capacity and trace; that the pooled cache reaches the wall "
    "is proved for capacity >= the number of distinct blocks. Reaching the wall at the "
    "committed instance's smaller capacity is the solver's certificate, for that instance.",
    "The sweep uses small generated instances (one stream, 1..16 hosts); its hit rates "
    "illustrate the trend and are not measurements.",
)

#: The committed instance, relative to the repository root.
INSTANCE_PATH = Path("data/placement/instance.json")

#: Format tag written into (and required from) every instance file.
INSTANCE_FORMAT = "kvcache-placement-instance/1"

#: Parameters of the committed instance (:func:`generate_instance` keyword arguments).
INSTANCE_PARAMS: dict[str, int] = {"seed": 2026, "hosts": 4, "blocks": 16, "requests": 48}

#: Parameters of the host-count sweep (the stream is the same for every host count).
SWEEP_PARAMS: dict[str, int] = {"seed": 7, "blocks": 16, "requests": 48, "max_hosts": 16}

#: CP-SAT parameters: fixed seed and at most two workers, so runs are reproducible.
SOLVER_PARAMS: dict[str, Any] = {"num_workers": 2, "random_seed": 0, "max_time_in_seconds": 60.0}

#: Name of the independent solver.
SOLVER_NAME = "Google OR-Tools CP-SAT"

#: Largest block size the generator draws (KV pages).
MAX_BLOCK_SIZE = 4


class PlacementError(Exception):
    """Bad input (an instance file, parameters) or a check that failed; the message says which."""


# --------------------------------------------------------------------------- instances


@dataclass(frozen=True)
class Instance:
    """A serving instance: hosts, block sizes, capacities and routed requests."""

    hosts: int
    block_sizes: tuple[int, ...]
    host_capacity: tuple[int, ...]
    pooled_capacity: int
    requests: tuple[tuple[int, int], ...]  # (host, block), in arrival order
    generator: dict[str, int]

    @property
    def stream(self) -> list[int]:
        """The block stream (what a pooled cache serves)."""
        return [b for _, b in self.requests]

    def on_host(self, host: int) -> list[int]:
        """The sub-stream routed to ``host`` (what its own cache serves)."""
        return [b for h, b in self.requests if h == host]


def wall(stream: Sequence[int]) -> int:
    """The wall: the number of distinct blocks in a stream."""
    return len(set(stream))


def host_walls(inst: Instance) -> int:
    """Sum over hosts of the distinct blocks each host sees (the per-instance floor)."""
    return sum(wall(inst.on_host(h)) for h in range(inst.hosts))


def shared_blocks(inst: Instance) -> list[int]:
    """Blocks requested on at least two different hosts."""
    seen: dict[int, set[int]] = {}
    for h, b in inst.requests:
        seen.setdefault(b, set()).add(h)
    return sorted(b for b, hs in seen.items() if len(hs) >= 2)


def live_peak(sizes: Sequence[int], stream: Sequence[int]) -> int:
    """Largest total size of the blocks that must stay resident to miss only once each.

    After serving request ``t`` a block is *live* when it was requested at or before ``t``
    and is requested again later. A cache of this capacity that keeps exactly the live
    blocks misses once per distinct block.
    """
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for t, b in enumerate(stream):
        first.setdefault(b, t)
        last[b] = t
    peak = 0
    for t in range(len(stream)):
        peak = max(peak, sum(sizes[b] for b in first if first[b] <= t < last[b]))
    return peak


def generate_instance(seed: int, hosts: int, blocks: int, requests: int) -> Instance:
    """Build an instance deterministically from ``seed``.

    * block sizes: uniform in 1..:data:`MAX_BLOCK_SIZE` KV pages;
    * stream: ``requests`` draws, block ``j`` with weight ``1/(j+1)`` (a few hot prefixes,
      a tail of cold ones);
    * routing: each request to a uniformly random host (cache-unaware load balancing);
    * pooled capacity: :func:`live_peak` of the stream (at least the largest block);
    * per-host capacity: the pooled capacity split evenly (the remainder to the first hosts),
      so both placements have the same total memory.

    The stream depends only on ``seed``, ``blocks`` and ``requests``; the routing also on
    ``hosts``. ``random.Random`` seeded with a string is stable across Python versions.
    """
    if hosts < 1 or blocks < 1 or requests < 1:
        raise PlacementError(
            f"generate_instance: hosts, blocks and requests must be >= 1 "
            f"(got {hosts}, {blocks}, {requests})"
        )
    rng = random.Random(f"kvcache-placement:{seed}:{blocks}:{requests}:stream")
    sizes = [rng.randint(1, MAX_BLOCK_SIZE) for _ in range(blocks)]
    weights = [1.0 / (j + 1) for j in range(blocks)]
    stream = rng.choices(range(blocks), weights=weights, k=requests)
    route_rng = random.Random(f"kvcache-placement:{seed}:{blocks}:{requests}:route:{hosts}")
    route = [route_rng.randrange(hosts) for _ in range(requests)]
    pooled = max(live_peak(sizes, stream), max(sizes[b] for b in stream))
    base, extra = divmod(pooled, hosts)
    caps = tuple(base + (1 if h < extra else 0) for h in range(hosts))
    return Instance(
        hosts=hosts,
        block_sizes=tuple(sizes),
        host_capacity=caps,
        pooled_capacity=pooled,
        requests=tuple(zip(route, stream, strict=True)),
        generator={"seed": seed, "hosts": hosts, "blocks": blocks, "requests": requests},
    )


def instance_bytes(inst: Instance) -> bytes:
    """The instance file's bytes: readable JSON (one request a line), same instance, same bytes."""

    def ints(xs: Sequence[int]) -> str:
        return "[" + ", ".join(str(int(x)) for x in xs) + "]"

    gen = ", ".join(f'"{k}": {int(v)}' for k, v in sorted(inst.generator.items()))
    lines = [
        "{",
        f'  "format": "{INSTANCE_FORMAT}",',
        '  "description": "Synthetic serving instance for the pooled-placement certificate. '
        'Generated by pytools.placement.generate_instance from the parameters below; sizes '
        'and capacities in KV pages; requests are [host, block] in arrival order.",',
        f'  "generator": {{{gen}}},',
        f'  "hosts": {inst.hosts},',
        f'  "block_sizes": {ints(inst.block_sizes)},',
        f'  "host_capacity": {ints(inst.host_capacity)},',
        f'  "pooled_capacity": {inst.pooled_capacity},',
        '  "requests": [',
    ]
    reqs = [f"    {ints(r)}" for r in inst.requests]
    lines.append(",\n".join(reqs))
    lines.append("  ]")
    lines.append("}")
    return ("\n".join(lines) + "\n").encode("utf-8")


def write_instance(path: Path, inst: Instance) -> None:
    """Write an instance file atomically (temp file, then ``os.replace``)."""
    atomic_write_bytes(path, instance_bytes(inst))


def _int(value: Any, where: str, lo: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise PlacementError(f"{where}: expected an integer >= {lo}, got {value!r}")
    return value


def _int_list(value: Any, where: str, lo: int = 0) -> list[int]:
    if not isinstance(value, list):
        raise PlacementError(f"{where}: expected a list of integers, got {type(value).__name__}")
    return [_int(v, f"{where}[{i}]", lo) for i, v in enumerate(value)]


def parse_instance(doc: Any, source: str) -> Instance:
    """Check a decoded instance document; every problem names ``source`` and the field."""
    if not isinstance(doc, dict):
        raise PlacementError(f"{source}: top level must be a JSON object")
    required = ("format", "generator", "hosts", "block_sizes", "host_capacity",
                "pooled_capacity", "requests")
    missing = [k for k in required if k not in doc]
    if missing:
        raise PlacementError(f"{source}: missing field(s) {', '.join(missing)}")
    if doc["format"] != INSTANCE_FORMAT:
        raise PlacementError(
            f"{source}: format is {doc['format']!r}, expected {INSTANCE_FORMAT!r}"
        )
    hosts = _int(doc["hosts"], f"{source}: hosts", 1)
    sizes = _int_list(doc["block_sizes"], f"{source}: block_sizes", 1)
    if not sizes:
        raise PlacementError(f"{source}: block_sizes is empty")
    caps = _int_list(doc["host_capacity"], f"{source}: host_capacity", 0)
    if len(caps) != hosts:
        raise PlacementError(
            f"{source}: host_capacity has {len(caps)} entries for {hosts} hosts"
        )
    pooled = _int(doc["pooled_capacity"], f"{source}: pooled_capacity", 0)
    if pooled != sum(caps):
        raise PlacementError(
            f"{source}: pooled_capacity {pooled} is not the sum of host_capacity ({sum(caps)})"
        )
    raw = doc["requests"]
    if not isinstance(raw, list) or not raw:
        raise PlacementError(f"{source}: requests must be a non-empty list of [host, block]")
    reqs: list[tuple[int, int]] = []
    for i, r in enumerate(raw):
        if not isinstance(r, list) or len(r) != 2:
            raise PlacementError(f"{source}: requests[{i}] must be [host, block], got {r!r}")
        h = _int(r[0], f"{source}: requests[{i}] host")
        b = _int(r[1], f"{source}: requests[{i}] block")
        if h >= hosts:
            raise PlacementError(f"{source}: requests[{i}] host {h} >= hosts ({hosts})")
        if b >= len(sizes):
            raise PlacementError(
                f"{source}: requests[{i}] block {b} has no size (only {len(sizes)} blocks)"
            )
        reqs.append((h, b))
    gen = doc["generator"]
    if not isinstance(gen, dict):
        raise PlacementError(f"{source}: generator must be an object")
    generator = {str(k): _int(v, f"{source}: generator.{k}") for k, v in gen.items()}
    return Instance(hosts, tuple(sizes), tuple(caps), pooled, tuple(reqs), generator)


def load_instance(path: Path) -> Instance:
    """Read and check an instance file; :class:`PlacementError` names the file and the problem."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PlacementError(f"{path}: instance file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PlacementError(f"{path}: cannot read instance file ({exc})") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PlacementError(f"{path}: not valid JSON ({exc})") from None
    return parse_instance(doc, str(path))


def check_instance_generated(path: Path) -> Instance:
    """Check that an instance file is exactly what its recorded generator parameters give.

    Catches a hand-edited (tampered) instance: any changed request, size or capacity.
    """
    inst = load_instance(path)
    keys = {"seed", "hosts", "blocks", "requests"}
    if set(inst.generator) != keys:
        raise PlacementError(f"{path}: generator must have exactly the keys {sorted(keys)}")
    expected = instance_bytes(generate_instance(**inst.generator))
    actual = Path(path).read_bytes()
    if actual != expected:
        raise PlacementError(
            f"{path}: does not match generate_instance({inst.generator}); the file was edited "
            "or the generator changed"
        )
    return inst


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
        "pooled_hit_rate": _rate(n - pooled.objective, n),
        "per_instance_hit_rate": _rate(n - per.objective, n),
        "solver": SOLVER_NAME,
        "solver_version": _ortools_version(),
        "solver_params": {k: SOLVER_PARAMS[k] for k in ("num_workers", "random_seed")},
    }
    return Certificate(figures, pooled.wall_seconds, per.wall_seconds)


def _rate(num: int, den: int) -> float:
    return round(num / den, 6) if den else 0.0


def _ortools_version() -> str:
    import ortools

    return str(ortools.__version__)


# --------------------------------------------------------------------------- sweep

SWEEP_COLUMNS = (
    "hosts", "requests", "wall", "pooled_misses", "per_instance_misses", "host_walls",
    "pooled_hit_rate", "per_instance_hit_rate", "per_instance_unbounded_hit_rate",
)


def sweep(params: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """Pooled against per-instance, 1..max_hosts hosts, one stream, same total memory.

    Every row is CP-SAT-optimal (pooled and per-instance), so the rows are deterministic.
    ``per_instance_unbounded_hit_rate`` is per-instance caching with unbounded memory (the
    Lean floor ``hostWalls``, reached by keep-everything caches).
    """
    p = dict(SWEEP_PARAMS if params is None else params)
    rows = []
    for hosts in range(1, p["max_hosts"] + 1):
        inst = generate_instance(p["seed"], hosts, p["blocks"], p["requests"])
        pooled = solve_pooled(inst)
        check_solve(pooled, inst.block_sizes, [inst.pooled_capacity])
        per = solve_per_instance(inst)
        check_solve(per, inst.block_sizes, inst.host_capacity)
        n = len(inst.requests)
        hw = host_walls(inst)
        rows.append({
            "hosts": hosts,
            "requests": n,
            "wall": wall(inst.stream),
            "pooled_misses": pooled.objective,
            "per_instance_misses": per.objective,
            "host_walls": hw,
            "pooled_hit_rate": _rate(n - pooled.objective, n),
            "per_instance_hit_rate": _rate(n - per.objective, n),
            "per_instance_unbounded_hit_rate": _rate(n - hw, n),
        })
    return rows


def sweep_table(rows: Sequence[dict[str, Any]]) -> str:
    """The sweep as a fixed-width text table."""
    out = io.StringIO()
    out.write(" ".join(f"{c:>12}" if i else f"{c:>5}" for i, c in enumerate(
        ("hosts", "wall", "pooled_miss", "per_inst_miss", "host_walls", "pooled_hit",
         "per_inst_hit", "unbounded_hit"))) + "\n")
    for r in rows:
        vals = (r["hosts"], r["wall"], r["pooled_misses"], r["per_instance_misses"],
                r["host_walls"], r["pooled_hit_rate"], r["per_instance_hit_rate"],
                r["per_instance_unbounded_hit_rate"])
        out.write(" ".join(f"{v:>12}" if i else f"{v:>5}" for i, v in enumerate(vals)) + "\n")
    return out.getvalue()


def sweep_csv(rows: Sequence[dict[str, Any]]) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(SWEEP_COLUMNS), lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({c: r[c] for c in SWEEP_COLUMNS})
    return out.getvalue().encode("utf-8")


def sweep_svg(rows: Sequence[dict[str, Any]]) -> bytes:
    """Hit rate against host count, byte-deterministic (fixed hash salt, no date)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rc = {"svg.hashsalt": "kvcache-placement", "svg.fonttype": "path", "path.simplify": True}
    with matplotlib.rc_context(rc):
        fig, ax = plt.subplots(figsize=(6.4, 4.0))
        try:
            hosts = [r["hosts"] for r in rows]
            ax.plot(hosts, [r["pooled_hit_rate"] for r in rows], marker="o",
                    label="pooled (CP-SAT optimum = wall)")
            ax.plot(hosts, [r["per_instance_unbounded_hit_rate"] for r in rows], marker="^",
                    label="per-instance, unbounded memory (Lean floor)")
            ax.plot(hosts, [r["per_instance_hit_rate"] for r in rows], marker="s",
                    label="per-instance, same total memory (CP-SAT optimum)")
            ax.set_xlabel("hosts")
            ax.set_ylabel("hit rate")
            ax.set_ylim(0, 1)
            ax.set_xticks(hosts)
            ax.grid(True, alpha=0.3)
            ax.legend(loc="center right", fontsize=8)
            ax.set_title("Pooled vs per-instance KV caching (synthetic stream)", fontsize=10)
            buf = io.BytesIO()
            fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
        finally:
            plt.close(fig)
    return buf.getvalue()


def write_sweep(out_dir: Path, rows: Sequence[dict[str, Any]] | None = None) -> list[Path]:
    """Write ``placement_sweep.csv`` and ``placement_sweep.svg`` into ``out_dir``."""
    rows = sweep() if rows is None else rows
    out_dir = Path(out_dir)
    csv_path = out_dir / "placement_sweep.csv"
    svg_path = out_dir / "placement_sweep.svg"
    atomic_write_bytes(csv_path, sweep_csv(rows))
    atomic_write_bytes(svg_path, sweep_svg(rows))
    return [csv_path, svg_path]


# --------------------------------------------------------------------------- evidence


def evidence(root: Path) -> Evidence:
    """Figures of the result ``pooled-placement``, from the committed instance file."""
    path = Path(root) / INSTANCE_PATH
    inst = check_instance_generated(path)
    cert = certify_instance(inst)
    figures = dict(cert.figures)
    figures["sweep_seed"] = SWEEP_PARAMS["seed"]
    figures["sweep_params"] = dict(SWEEP_PARAMS)
    figures["sweep"] = sweep()
    return Evidence(
        figures=figures,
        inputs=(InputFile(INSTANCE_PATH.as_posix(), sha256_file(path)),),
    )


def check_figures(
    root: Path, figures: dict[str, Any], fresh: dict[str, Any] | None = None
) -> list[str]:
    """List every recorded figure that differs from the recomputed one (empty: all agree).

    ``fresh`` is the recomputed figures (default: :func:`evidence` of ``root`` now).
    """
    fresh = evidence(root).figures if fresh is None else fresh
    problems = []
    for key in sorted(set(fresh) | set(figures)):
        if key not in figures:
            problems.append(f"{key}: missing")
        elif key not in fresh:
            problems.append(f"{key}: not a figure of {RESULT_ID}")
        elif figures[key] != fresh[key]:
            problems.append(f"{key}: recorded {figures[key]!r}, recomputed {fresh[key]!r}")
    return problems


# --------------------------------------------------------------------------- CLI


@click.group(invoke_without_command=True)
@click.option("--root", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Repository root (default: the project root).")
@click.pass_context
def main(ctx: click.Context, root: Path | None) -> None:
    """Pooled KV placement: CP-SAT certificate on the committed instance (default: solve)."""
    ctx.obj = root or project_root()
    if ctx.invoked_subcommand is None:
        ctx.invoke(solve_cmd)


@main.command("solve")
@click.option("--instance", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Instance file (default: the committed data/placement/instance.json).")
@click.pass_obj
def solve_cmd(root: Path, instance: Path | None) -> None:
    """Solve pooled and per-instance placement, check them, print figures and timings."""
    path = instance or (root / INSTANCE_PATH)
    try:
        inst = load_instance(path)
        cert = certify_instance(inst)
    except PlacementError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"instance {path}  sha256 {sha256_file(path)}")
    click.echo(json.dumps(cert.figures, indent=2, sort_keys=True))
    click.echo(f"solve time (not a figure): pooled {cert.pooled_seconds:.3f} s, "
               f"per-instance {cert.per_instance_seconds:.3f} s")


@main.command("generate")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Where to write (default: the committed instance path).")
@click.option("--check", is_flag=True, help="Only check the file matches the generator.")
@click.pass_obj
def generate_cmd(root: Path, out: Path | None, check: bool) -> None:
    """(Re)generate the committed instance from INSTANCE_PARAMS, or check it."""
    path = out or (root / INSTANCE_PATH)
    try:
        if check:
            check_instance_generated(path)
            click.echo(f"{path}: matches generate_instance({INSTANCE_PARAMS})")
            return
        write_instance(path, generate_instance(**INSTANCE_PARAMS))
    except PlacementError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote {path}  sha256 {sha256_file(path)}")


@main.command("sweep")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Also write the CSV table and the SVG plot into this folder.")
def sweep_cmd(out: Path | None) -> None:
    """Pooled against per-instance hit rates over 1..16 hosts."""
    start = time.perf_counter()
    try:
        rows = sweep()
    except PlacementError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"sweep seed {SWEEP_PARAMS['seed']}, params {SWEEP_PARAMS}")
    click.echo(sweep_table(rows), nl=False)
    click.echo(f"sweep time (not a figure): {time.perf_counter() - start:.2f} s")
    if out is not None:
        for p in write_sweep(out, rows):
            click.echo(f"wrote {p}")


@main.command("evidence")
@click.pass_obj
def evidence_cmd(root: Path) -> None:
    """Print the evidence (figures and inputs) of the result as JSON."""
    try:
        ev = evidence(root)
    except PlacementError as exc:
        raise click.ClickException(str(exc)) from None
    doc = {"figures": ev.figures,
           "inputs": [{"path": i.path, "sha256": i.sha256} for i in ev.inputs]}
    json.dump(doc, sys.stdout, indent=2, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
