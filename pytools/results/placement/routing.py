"""Pooled against per-instance KV caching on real traffic, under the routings operators use.

On a block-reference trace (the shared Mooncake conversation trace, read once by the trace
reader :func:`pytools.traces.trace.read_trace`), at equal total memory: a *total capacity*
C (blocks) is either one pooled cache of C blocks, or ``hosts`` per-instance caches of
C / hosts blocks each (every total capacity here is a multiple of every host count, so the
split is exact and the per-host capacities sum to C). Each per-instance cache is LRU and
serves only the requests routed to its host; a request is routed whole (all of its
``hash_ids``, in order, to one host). The routings:

* ``random``: each request to a host drawn by ``random.Random`` seeded with a string (stable
  across Python versions), one seed per host count;
* ``round-robin``: request ``i`` (0-based, file order) to host ``i mod hosts``;
* ``prefix-hash-1`` / ``prefix-hash-2``: session/prefix affinity, the request's first one
  (resp. two) block ids hashed (BLAKE2b, 8 bytes) modulo the host count. On the Mooncake
  conversation trace every request starts with block 0 (a shared system prompt), so one block
  sends every request to one host; the second block is the first of the conversation;
* ``kv-aware``: :data:`KV_AWARE_RULE`; a router in the spirit of NVIDIA Dynamo's KV router,
  llm-d's prefix-cache scorer and SGLang's cache-aware router, which also fall back to load
  when the cache-preferred worker is overloaded. Its load is requests routed so far (this
  model has no time, hence no queue or in-flight count).

Against them: pooled LRU and pooled Belady (exact at every capacity from the traces'
stack-distance curve, :mod:`pytools.traces.curve`), pooled Belady with bypass
(:func:`pytools.traces.bypass.simulate_belady_bypass`), and the wall (compulsory
misses: distinct blocks). Lean proves
(``KVCache.Placement.perInstanceMisses_ge_pooled_beladyBypass``) that pooled Belady with
bypass at capacity Σ cap misses no more than per-instance caches under *every* routing (the
routed trace each routing produces, adaptive or not) and every family of per-host
demand-fetch policies fitting cap; :func:`check_sweep` refuses figures that contradict it,
the wall, or each host's own distinct blocks. The certificate's figures, table and plot are
:mod:`.routing_report`'s.

The per-host simulations are compiled with numba (one doubly-linked LRU list per host over
dense block ids, :mod:`.lru_lists`): the whole host x capacity x routing sweep of the trace
takes seconds.
"""

from __future__ import annotations

import functools
import hashlib
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from pytools.traces.bypass import simulate_belady_bypass
from pytools.traces.curve import Curve, stack_hits
from pytools.traces.trace import CLAIM_WINDOW, TraceError, TraceRead, Window, read_trace

from .instance import PlacementError
from .lru_lists import HIT, kv_aware_host, lru_tables, lru_touch

#: SHA-256 of lru_lists.py, whose functions this module's cached kernels inline: numba keys
#: a cached kernel by this file alone, so an edit there must change this line too
#: (:mod:`.lru_lists`; tests/test_placement_routing.py checks it).
LRU_LISTS_SHA256 = "b724755ec208f450b877d318135b69514a21a22f94e3a314d820936db9ee8b4e"

#: Host counts of the sweep.
HOSTS: tuple[int, ...] = (1, 2, 4, 8, 16)

#: Total capacities (blocks) of the sweep, below the wall; the wall rounded up to a multiple
#: of every host count is added (pooled caching reaches the wall there).
TOTAL_CAPACITIES: tuple[int, ...] = (256, 1024, 4096, 16384, 65536, 131072)

#: The routings, in table order.
ROUTINGS: tuple[str, ...] = ("random", "round-robin", "prefix-hash-1", "prefix-hash-2",
                             "kv-aware")

#: Seed of the random routing (the generator of host count h is seeded with
#: ``f"kvcache-routing:random:{seed}:{h}"``).
RANDOM_SEED = 2026

#: The KV-aware router's load slack, in percent of the mean load.
KV_AWARE_SLACK_PERCENT = 25

#: The KV-aware router's rule, as stated in the certificate.
KV_AWARE_RULE = (
    "kv-aware: a host is eligible when the requests routed to it so far are at most "
    f"(1 + {KV_AWARE_SLACK_PERCENT} %) x the mean over hosts (requests so far / hosts; the "
    "least-loaded host always is); among eligible hosts the request goes to the one whose LRU "
    "cache holds the longest prefix of the request (its leading block ids cached there, "
    "counted up to the first one absent), ties to the fewest requests so far, then the lowest "
    "host index"
)

#: Each routing's rule, as stated in the certificate.
ROUTING_RULES: dict[str, str] = {
    "random": f"random: each request to a host drawn by random.Random seeded with "
              f"'kvcache-routing:random:{RANDOM_SEED}:<hosts>'",
    "round-robin": "round-robin: request i (0-based, file order) to host i mod hosts",
    "prefix-hash-1": "prefix-hash-1: BLAKE2b-64 of the request's first block id, mod hosts",
    "prefix-hash-2": "prefix-hash-2: BLAKE2b-64 of the request's first two block ids, mod "
                     "hosts (session affinity: the second block is the conversation's first)",
    "kv-aware": KV_AWARE_RULE,
}

#: The Lean theorem every row is checked against (Proofs/Placement/Simulation.lean).
BOUND_THEOREM = "KVCache.Placement.perInstanceMisses_ge_pooled_beladyBypass"

#: The public claim's figures: at 16 hosts the pooled cache "keeps 93.75 %", per-instance
#: caching "falls to 34 %" (hit rates).
CLAIM_HOSTS = 16
CLAIM_POOLED = Fraction(9375, 10000)
CLAIM_PER_INSTANCE = Fraction(34, 100)


# --------------------------------------------------------------------------- the parse


@dataclass(frozen=True, eq=False)
class Requests:
    """A trace's requests as flat numpy arrays: request ``r`` references
    ``ids[offsets[r]:offsets[r + 1]]`` (ids remapped densely to ``0..distinct-1`` in order of
    first reference, so that per-host tables can be indexed by block)."""

    name: str
    sha256: str
    offsets: np.ndarray  # int64, len requests + 1
    ids: np.ndarray  # int64, dense
    first_ids: tuple[tuple[int, ...], ...] = field(repr=False)  # each request's first 2 ids

    @property
    def requests(self) -> int:
        return int(self.offsets.shape[0] - 1)

    @property
    def references(self) -> int:
        return int(self.ids.shape[0])

    @property
    def distinct(self) -> int:
        return int(self.ids.max()) + 1 if self.ids.shape[0] else 0


def requests_of(reqs: Sequence[Sequence[int]], name: str = "", sha256: str = "") -> Requests:
    """The flat arrays of ``reqs`` (each request's ``hash_ids``)."""
    lengths = np.fromiter((len(r) for r in reqs), dtype=np.int64, count=len(reqs))
    offsets = np.zeros(len(reqs) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    flat = np.fromiter((x for r in reqs for x in r), dtype=np.int64, count=int(offsets[-1]))
    if flat.shape[0]:
        _, first, inverse = np.unique(flat, return_index=True, return_inverse=True)
        rank = np.empty_like(first)
        rank[np.argsort(first, kind="stable")] = np.arange(first.shape[0])
        dense = rank[inverse].astype(np.int64)
    else:
        dense = flat
    return Requests(name, sha256, offsets, dense, tuple(tuple(r[:2]) for r in reqs))


def trace_requests(path: Path, window: Window | None = None) -> Requests:
    """Read, validate and hash the trace at ``path`` once (the ceiling result's parser) and
    flatten its requests (those of ``window`` only, if given; the SHA-256 is the file's)."""
    trace: TraceRead = read_trace(Path(path))
    reqs = trace.window(window.start, window.end) if window else trace.requests
    return requests_of(reqs, trace.name, trace.sha256)


# --------------------------------------------------------------------------- LRU kernels


@njit(cache=True, nogil=True)
def _routed_lru(offsets, ids, route, hosts, cap, blocks, kv_aware, slack_percent
                ):  # pragma: no cover
    """Per-host LRU caches of ``cap`` blocks serving the requests, each to ``route[r]`` or,
    with ``kv_aware``, to the host the KV-aware rule picks (written into ``route``). Returns
    per host: hits, references served, distinct blocks served, peak occupancy, requests."""
    present, prev, nxt, head, tail, size = lru_tables(hosts, blocks)
    seen = np.zeros(hosts * blocks, dtype=np.bool_)
    hits = np.zeros(hosts, dtype=np.int64)
    refs = np.zeros(hosts, dtype=np.int64)
    distinct = np.zeros(hosts, dtype=np.int64)
    peak = np.zeros(hosts, dtype=np.int64)
    load = np.zeros(hosts, dtype=np.int64)
    for r in range(offsets.shape[0] - 1):
        lo = offsets[r]
        hi = offsets[r + 1]
        if kv_aware:
            route[r] = kv_aware_host(present, load, ids, lo, hi, r, hosts, blocks, slack_percent)
        h = route[r]
        load[h] += 1
        base = h * blocks
        for k in range(lo, hi):
            slot = base + ids[k]
            if not seen[slot]:
                seen[slot] = True
                distinct[h] += 1
            if lru_touch(slot, h, cap, present, prev, nxt, head, tail, size) == HIT:
                hits[h] += 1
            refs[h] += 1
        if size[h] > peak[h]:
            peak[h] = size[h]
    return hits, refs, distinct, peak, load


# --------------------------------------------------------------------------- routings


@dataclass(frozen=True)
class HostRun:
    """Per-instance LRU caches under one routing: per host, hits, references served, distinct
    blocks served (its own wall), peak occupancy and requests routed to it."""

    routing: str
    hosts: int
    capacity: int  # per host
    hits: tuple[int, ...]
    references: tuple[int, ...]
    distinct: tuple[int, ...]
    peak: tuple[int, ...]
    load: tuple[int, ...]

    @property
    def total_hits(self) -> int:
        return sum(self.hits)

    @property
    def load_spread(self) -> Fraction:
        """Max over mean requests per host (1: perfectly balanced; ``hosts``: one host)."""
        total = sum(self.load)
        return Fraction(max(self.load) * self.hosts, total) if total else Fraction(1)


def _blake64(ids: Sequence[int]) -> int:
    data = b"".join(int(x).to_bytes(8, "little", signed=False) for x in ids)
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def static_route(reqs: Requests, routing: str, hosts: int) -> np.ndarray:
    """The host of every request under a routing that does not look at the caches."""
    n = reqs.requests
    if routing == "random":
        rng = random.Random(f"kvcache-routing:random:{RANDOM_SEED}:{hosts}")
        return np.fromiter((rng.randrange(hosts) for _ in range(n)), dtype=np.int64, count=n)
    if routing == "round-robin":
        return np.arange(n, dtype=np.int64) % hosts
    if routing in ("prefix-hash-1", "prefix-hash-2"):
        keys = _prefix_keys(reqs, int(routing[-1]))
        return np.asarray([k % hosts for k in keys], dtype=np.int64).reshape(n)
    raise ValueError(f"unknown static routing {routing!r} (known: {', '.join(ROUTINGS[:-1])})")


def _prefix_keys(reqs: Requests, blocks: int) -> tuple[int, ...]:
    """The affinity hash of each request's first ``blocks`` original block ids."""
    return tuple(_blake64(first[:blocks]) for first in reqs.first_ids)


#: Simulates per-instance LRU caches: (requests, routing name, route or None for kv-aware,
#: hosts, per-host capacity) -> HostRun. Injectable so tests can plant a faulty one.
HostSimulator = Callable[[Requests, str, "np.ndarray | None", int, int], HostRun]


def simulate_hosts(reqs: Requests, routing: str, route: np.ndarray | None, hosts: int,
                   capacity: int) -> HostRun:
    """Per-host LRU caches of ``capacity`` blocks under ``route`` (or, when ``route`` is
    ``None``, under the KV-aware rule, which routes as it goes)."""
    if capacity < 0 or hosts < 1:
        raise ValueError(f"need hosts >= 1 and capacity >= 0, got {hosts}, {capacity}")
    kv_aware = route is None
    chosen = np.zeros(reqs.requests, dtype=np.int64) if kv_aware else np.ascontiguousarray(
        route, dtype=np.int64)
    if not kv_aware and chosen.shape[0] and (chosen.min() < 0 or chosen.max() >= hosts):
        raise ValueError(f"a route outside hosts 0..{hosts - 1}")
    if hosts * max(reqs.distinct, 1) >= 2**31:
        raise ValueError(f"{hosts} hosts x {reqs.distinct} blocks: beyond the int32 tables")
    hits, refs, distinct, peak, load = _routed_lru(
        reqs.offsets, reqs.ids, chosen, hosts, capacity, max(reqs.distinct, 1), kv_aware,
        KV_AWARE_SLACK_PERCENT)
    return HostRun(routing, hosts, capacity, *(tuple(int(v) for v in a)
                                               for a in (hits, refs, distinct, peak, load)))


# --------------------------------------------------------------------------- the sweep


@dataclass(frozen=True)
class PooledRow:
    """One pooled cache of ``capacity`` blocks: LRU, Belady and Belady-with-bypass hits."""

    capacity: int
    lru_hits: int
    belady_hits: int
    bypass_hits: int


@dataclass(frozen=True)
class RoutingSweep:
    """The sweep: pooled rows per total capacity, per-instance runs per (capacity, hosts,
    routing), and the trace's counts."""

    name: str
    sha256: str
    requests: int
    references: int
    distinct: int  # the wall
    hosts: tuple[int, ...]
    capacities: tuple[int, ...]
    pooled: tuple[PooledRow, ...]
    runs: tuple[HostRun, ...]

    def run(self, capacity: int, hosts: int, routing: str) -> HostRun:
        return find_run(self.runs, capacity, hosts, routing)

    def pooled_at(self, capacity: int) -> PooledRow:
        return find_pooled(self.pooled, capacity)


def find_run(runs: Sequence[Any], capacity: int, hosts: int, routing: str) -> Any:
    """The run of a sweep (per-host capacity ``r.capacity``) at total ``capacity`` over
    ``hosts`` hosts under ``routing``; KeyError if there is none."""
    for r in runs:
        if r.hosts == hosts and r.capacity * hosts == capacity and r.routing == routing:
            return r
    raise KeyError((capacity, hosts, routing))


def find_pooled(pooled: Sequence[Any], capacity: int) -> Any:
    """The pooled row of a sweep at total ``capacity``; KeyError if there is none."""
    for p in pooled:
        if p.capacity == capacity:
            return p
    raise KeyError(capacity)


def sweep_capacities(distinct: int, hosts: Sequence[int] = HOSTS,
                     totals: Sequence[int] = TOTAL_CAPACITIES) -> tuple[int, ...]:
    """The total capacities below the wall, then the wall rounded up to a multiple of every
    host count (every total splits evenly across every host count)."""
    step = math.lcm(*hosts)
    top = -(-max(distinct, 1) // step) * step
    bad = [c for c in totals if c % step]
    if bad:
        raise ValueError(f"capacities {bad} do not split evenly across hosts {tuple(hosts)}")
    return (*sorted(c for c in totals if c < distinct), top)


#: A progress callback: steps done, steps in all.
StepProgress = Callable[[int, int], None]


def sweep_steps(capacities: Sequence[int], hosts: Sequence[int] = HOSTS,
                routings: Sequence[str] = ROUTINGS) -> int:
    """The steps :func:`run_sweep` (and :func:`.routing_prefix.run_prefix_sweep`) reports: one
    pooled row per capacity, then one simulation per (capacity, hosts, routing)."""
    return len(capacities) * (1 + len(hosts) * len(routings))


def checked_capacities(reqs: Requests, hosts: Sequence[int],
                       capacities: Sequence[int] | None) -> tuple[int, ...]:
    """The total capacities of a sweep of ``reqs`` over ``hosts`` (``capacities``, or
    :func:`sweep_capacities`'), each split evenly across every host count; a trace without
    block references or a capacity that does not split is a :class:`PlacementError`."""
    if reqs.references == 0:
        raise PlacementError(f"{reqs.name or 'trace'}: no block references")
    caps = tuple(capacities) if capacities is not None else sweep_capacities(
        reqs.distinct, hosts)
    for c in caps:
        for h in hosts:
            if c % h:
                raise PlacementError(f"total capacity {c} does not split evenly across {h} hosts")
    return caps


def run_sweep(reqs: Requests, hosts: Sequence[int] = HOSTS,
              capacities: Sequence[int] | None = None,
              routings: Sequence[str] = ROUTINGS,
              simulate: HostSimulator = simulate_hosts,
              progress: StepProgress | None = None) -> RoutingSweep:
    """Every (total capacity, hosts, routing) of the sweep on one parse of the trace, plus the
    pooled caches at every total capacity; checked by :func:`check_sweep`."""
    caps = checked_capacities(reqs, hosts, capacities)
    total = sweep_steps(caps, hosts, routings)
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    lru, opt = stack_hits([reqs.ids], expected_refs=reqs.references + 1)
    curve = Curve(reqs.references, int(lru.shape[0]), lru, opt)
    stream = reqs.ids.tolist()
    pooled = []
    for c in caps:
        lru_hits, belady_hits = curve.at(c)
        pooled.append(PooledRow(c, lru_hits, belady_hits, simulate_belady_bypass(stream, c)))
        tick()
    routes = {(r, h): static_route(reqs, r, h) for r in routings if r != "kv-aware"
              for h in hosts}
    runs = []
    for c in caps:
        for h in hosts:
            for r in routings:
                runs.append(simulate(reqs, r, routes.get((r, h)), h, c // h))
                tick()
    result = RoutingSweep(reqs.name, reqs.sha256, reqs.requests, reqs.references,
                          reqs.distinct, tuple(hosts), caps, tuple(pooled), tuple(runs))
    problems = check_sweep(result)
    if problems:
        raise PlacementError("routing sweep contradicts the checks: " + "; ".join(problems))
    return result


def check_sweep(sw: RoutingSweep) -> list[str]:
    """Every way the sweep contradicts what is proved or what it must be (empty: none).

    Per pooled row: Belady with bypass hits >= Belady >= LRU... (Belady >= LRU, bypass >=
    Belady: ``belady_hits_le_beladyBypass_bhits``), hits <= references - wall. Per run: the
    hosts' requests add up to the trace's and their references too (each request served
    once), occupancy within the per-host capacity, misses >= the host's own distinct blocks
    (``hostWalls_le_perInstanceMisses``), and misses >= pooled Belady-with-bypass misses at
    the total capacity (:data:`BOUND_THEOREM`); at one host every routing is pooled LRU."""
    problems = []
    top = sw.references - sw.distinct
    for p in sw.pooled:
        if not p.lru_hits <= p.belady_hits <= p.bypass_hits <= top:
            problems.append(f"pooled at {p.capacity}: need LRU {p.lru_hits} <= Belady "
                            f"{p.belady_hits} <= bypass {p.bypass_hits} <= refs - wall {top}")
    pooled = {p.capacity: p for p in sw.pooled}
    for run in sw.runs:
        where = f"{run.routing}, {run.hosts} hosts x {run.capacity} blocks"
        total = run.capacity * run.hosts
        if total not in pooled:
            problems.append(f"{where}: no pooled row at total capacity {total}")
            continue
        if len(run.load) != run.hosts or sum(run.load) != sw.requests:
            problems.append(f"{where}: {sum(run.load)} requests routed over {len(run.load)} "
                            f"hosts, the trace has {sw.requests}")
        if sum(run.references) != sw.references:
            problems.append(f"{where}: {sum(run.references)} references served, the trace has "
                            f"{sw.references}")
        if max(run.peak, default=0) > run.capacity:
            problems.append(f"{where}: a host held {max(run.peak)} blocks")
        for h, (hits, refs, dist) in enumerate(
                zip(run.hits, run.references, run.distinct, strict=True)):
            if hits < 0 or refs - hits < dist:
                problems.append(f"{where}: host {h} missed {refs - hits} times, below its "
                                f"{dist} distinct blocks (hostWalls_le_perInstanceMisses)")
        bound = sw.references - pooled[total].bypass_hits
        if sw.references - run.total_hits < bound:
            problems.append(f"{where}: {sw.references - run.total_hits} misses, below pooled "
                            f"Belady with bypass at {total} ({bound}), against {BOUND_THEOREM}")
        if run.hosts == 1 and run.total_hits != pooled[total].lru_hits:
            problems.append(f"{where}: {run.total_hits} hits, pooled LRU has "
                            f"{pooled[total].lru_hits}")
    return problems


# --------------------------------------------------------------------------- the trace


#: The claim's window of the trace (lines, 1-based inclusive), the one the ceiling result states.
CLAIM_LINES: tuple[int, int] = (CLAIM_WINDOW.start, CLAIM_WINDOW.end)


@dataclass(frozen=True)
class TraceSweeps:
    """The sweep of a whole trace and of the claim's window of it, from one parse."""

    whole: RoutingSweep
    window: RoutingSweep
    lines: tuple[int, int]


@functools.lru_cache(maxsize=2)
def trace_sweeps(path: str, sha256: str) -> TraceSweeps:
    """The sweeps of the trace at ``path`` and of its lines :data:`CLAIM_LINES` (replayed
    alone, from empty caches), from one parse (computed once per content hash: the evidence
    and the artifacts ask for the same ones); the bytes read must be those of ``sha256``."""
    trace = read_trace(Path(path))
    if trace.sha256 != sha256:
        raise TraceError(f"{path}: changed while it was read (sha256 {trace.sha256}, expected "
                         f"{sha256})")
    first, last = CLAIM_LINES
    whole = run_sweep(requests_of(trace.requests, trace.name, trace.sha256))
    window = run_sweep(requests_of(trace.window(first, last), trace.name, trace.sha256))
    return TraceSweeps(whole, window, CLAIM_LINES)
