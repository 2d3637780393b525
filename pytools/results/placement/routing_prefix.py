"""Per-host prefix caches under each routing against one pooled prefix cache with remote hits
charged, at equal total memory, on one parse of a trace (issue 44, item 2).

**Semantics.** A request's hits are its *leading run* of cached blocks (prefix semantics,
:mod:`pytools.traces.prefix`): before a request touches anything, its blocks are looked up in
order and the first absent one ends the run; then all its blocks are touched *tail first* in
a flat LRU list (as vLLM frees them). For capacities at least the longest request that cache
is radix LRU (evict the least recently used leaf; ``Proofs/Ceiling/PrefixLru*.lean``); below
it, it is the same flat LRU over tail-first touches (still closed under prefixes on chained
ids: a block's parent is always touched after it), which the prefix curve of
:mod:`pytools.traces.prefix` computes too. Weights: blocks, and tokens (a block's tokens from
``input_length``, the last block of a request partial, as :func:`~pytools.traces.prefix.
block_weights` says).

**Per host.** ``hosts`` such caches of ``C / hosts`` blocks, each serving the requests routed
to it, under the routings of :mod:`.routing` (random, round-robin, prefix-hash-1/2: the route
does not look at the caches; kv-aware: the longest leading run among hosts within the load
slack, asked of each host's prefix cache).

**Pooled.** One cache of ``C`` blocks (the same tail-first LRU: one global radix LRU), each
block living in the memory of the host that computed it (the host of the request that
inserted it; a hit does not move it). A request on host ``g`` pays per block of its leading
run 0 if the block lives on ``g``, ``r`` if it lives on another host, and ``m`` per block after
the run. The route of every request is the per-host run's (for kv-aware: the hosts it chose).

**The flat accounting of the per-host run** (``KVCache.Placement.pooled_cost_le_perInstance_
cost``): the per-host caches are flat LRU caches over the routed stream of tail-first touches
``(g, y)``; on each touch, before it, ``y`` is on ``g`` (local), on another host (a remote hit
of the mirroring pool: ``e``) or nowhere (a miss). The per-host flat misses count the touches
that miss on their host. These are the theorem's quantities for this stream: see
:mod:`.routing_cost`.

**Bounds.** Each host's routed sub-trace (its requests' blocks in file order) is replayed
through Belady with bypass at the host's capacity (numba, equal to
:func:`pytools.traces.bypass.simulate_belady_bypass`: tested), and the whole trace at ``C``
for the pool: ``KVCache.Ceiling.runHits_le_beladyBypass_bhits`` bounds every prefix cache's
hits by it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from numba import njit

from pytools.traces.prefix import PrefixCurve, PrefixTrace, prefix_curve_of, read_prefix_trace
from pytools.traces.trace import Window

from .lru_lists import DROPPED, HIT, kv_aware_host, lru_tables, lru_touch
from .routing import (
    HOSTS,
    KV_AWARE_SLACK_PERCENT,
    ROUTINGS,
    Requests,
    StepProgress,
    checked_capacities,
    find_pooled,
    find_run,
    static_route,
    sweep_steps,
)

#: SHA-256 of lru_lists.py, whose functions this module's cached kernels inline: numba keys
#: a cached kernel by this file alone, so an edit there must change this line too
#: (:mod:`.lru_lists`; tests/test_placement_routing.py checks it).
LRU_LISTS_SHA256 = "b724755ec208f450b877d318135b69514a21a22f94e3a314d820936db9ee8b4e"


# --------------------------------------------------------------------------- kernels

@njit(cache=True, nogil=True)
def _routed_prefix(offsets, ids, weights, route, hosts, cap, blocks, kv_aware, slack_percent,
                   out, joint):  # pragma: no cover
    """Per-host prefix caches of ``cap`` blocks. ``out[h]``: prefix hits, prefix hit weight,
    references, weight, flat touch hits, peak occupancy, requests, distinct blocks; ``joint``:
    the per-host run's touches local, cached on another host, cached nowhere."""
    present, prev, nxt, head, tail, size = lru_tables(hosts, blocks)
    seen = np.zeros(hosts * blocks, dtype=np.bool_)
    load = np.zeros(hosts, dtype=np.int64)
    copies = np.zeros(blocks, dtype=np.int32)  # hosts caching each block
    for r in range(offsets.shape[0] - 1):
        lo = offsets[r]
        hi = offsets[r + 1]
        if kv_aware:
            route[r] = kv_aware_host(present, load, ids, lo, hi, r, hosts, blocks, slack_percent)
        h = route[r]
        load[h] += 1
        base = h * blocks
        alive = True
        for k in range(lo, hi):
            w = weights[k]
            out[h, 2] += 1
            out[h, 3] += w
            if alive and present[base + ids[k]]:
                out[h, 0] += 1
                out[h, 1] += w
            else:
                alive = False
        for k in range(hi - 1, lo - 1, -1):
            y = ids[k]
            slot = base + y
            if not seen[slot]:
                seen[slot] = True
                out[h, 7] += 1
            if present[slot]:
                joint[0] += 1
            elif copies[y] > 0:
                joint[1] += 1
            else:
                joint[2] += 1
            v = lru_touch(slot, h, cap, present, prev, nxt, head, tail, size)
            if v == HIT:
                out[h, 4] += 1
            elif v != DROPPED:
                copies[y] += 1
                if v >= 0:
                    copies[v - base] -= 1
        if size[h] > out[h, 5]:
            out[h, 5] = size[h]
    out[:, 6] += load


@njit(cache=True, nogil=True)
def _pooled_prefix(offsets, ids, weights, route, hosts, cap, blocks, out,
                   peak):  # pragma: no cover
    """One prefix cache of ``cap`` blocks, each block on the host that computed it. ``out``:
    leading-run blocks on the request's host, on another host, blocks after the run; the same
    three weighted; ``peak[h]``: the most blocks living on host ``h`` at once."""
    present, prev, nxt, head, tail, size = lru_tables(1, blocks)
    owner = np.full(blocks, -1, dtype=np.int64)
    held = np.zeros(hosts, dtype=np.int64)
    for r in range(offsets.shape[0] - 1):
        lo = offsets[r]
        hi = offsets[r + 1]
        g = route[r]
        alive = True
        for k in range(lo, hi):
            y = ids[k]
            w = weights[k]
            if alive and present[y]:
                if owner[y] == g:
                    out[0] += 1
                    out[3] += w
                else:
                    out[1] += 1
                    out[4] += w
            else:
                alive = False
                out[2] += 1
                out[5] += w
        for k in range(hi - 1, lo - 1, -1):
            y = ids[k]
            v = lru_touch(y, 0, cap, present, prev, nxt, head, tail, size)
            if v == HIT:
                continue
            if v == DROPPED:
                continue
            if v >= 0:
                held[owner[v]] -= 1
                owner[v] = -1
            owner[y] = g
            held[g] += 1
            if held[g] > peak[g]:
                peak[g] = held[g]


@njit(cache=True, nogil=True)
def _bypass_hits(stream, cap, blocks):  # pragma: no cover
    """Hits of Belady with bypass at ``cap`` on ``stream`` (dense ids below ``blocks``): the
    rule of :func:`pytools.traces.bypass.simulate_belady_bypass`, a max-heap of (next use,
    block) with lazy deletion."""
    n = stream.shape[0]
    if cap == 0 or n == 0:
        return 0
    nxt = np.empty(n, dtype=np.int64)
    last = np.full(blocks, n, dtype=np.int64)
    for i in range(n - 1, -1, -1):
        nxt[i] = last[stream[i]]
        last[stream[i]] = i
    keys = np.empty(n + 1, dtype=np.int64)
    vals = np.empty(n + 1, dtype=np.int64)
    cached = np.full(blocks, -1, dtype=np.int64)  # next use of a cached block, else -1
    hsize = 0
    size = 0
    hits = 0
    for i in range(n):
        b = stream[i]
        use = nxt[i]
        if cached[b] >= 0:
            hits += 1
        elif size >= cap:
            while cached[vals[0]] != keys[0]:  # stale top: pop it
                hsize = _heap_pop(keys, vals, hsize)
            if use >= keys[0]:
                continue  # bypass
            cached[vals[0]] = -1
            hsize = _heap_pop(keys, vals, hsize)
            size -= 1
        if cached[b] < 0:
            size += 1
        cached[b] = use
        keys[hsize] = use
        vals[hsize] = b
        i2 = hsize
        hsize += 1
        while i2 > 0:
            p = (i2 - 1) // 2
            if keys[p] >= keys[i2]:
                break
            keys[p], keys[i2] = keys[i2], keys[p]
            vals[p], vals[i2] = vals[i2], vals[p]
            i2 = p
    return hits


@njit(cache=True, nogil=True)
def _heap_pop(keys, vals, hsize):  # pragma: no cover
    """Remove the top of the max-heap of ``hsize`` entries; returns the new size."""
    hsize -= 1
    keys[0] = keys[hsize]
    vals[0] = vals[hsize]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= hsize:
            break
        big = left
        if left + 1 < hsize and keys[left + 1] > keys[left]:
            big = left + 1
        if keys[i] >= keys[big]:
            break
        keys[i], keys[big] = keys[big], keys[i]
        vals[i], vals[big] = vals[big], vals[i]
        i = big
    return hsize


def bypass_hits(stream: np.ndarray, capacity: int, blocks: int | None = None) -> int:
    """Hits of Belady with bypass at ``capacity`` on a stream of dense ids (numba)."""
    if capacity < 0:
        raise ValueError(f"capacity must be a non-negative integer, got {capacity!r}")
    s = np.ascontiguousarray(stream, dtype=np.int64)
    size = blocks if blocks is not None else (int(s.max()) + 1 if s.shape[0] else 1)
    return int(_bypass_hits(s, capacity, max(size, 1)))


# --------------------------------------------------------------------------- records


@dataclass(frozen=True, eq=False)
class PrefixRequests:
    """A trace's requests (dense ids, :class:`.routing.Requests`), each reference's weight in
    tokens, and its exact prefix-hit curves (blocks and tokens) from
    :mod:`pytools.traces.prefix`."""

    reqs: Requests
    tokens: np.ndarray  # int64, one a reference
    curve_blocks: PrefixCurve
    curve_tokens: PrefixCurve


def prefix_requests(trace: PrefixTrace) -> PrefixRequests:
    """The flat arrays of a trace read with token weights (its ids must be chained: the prefix
    curve refuses them otherwise, naming the line)."""
    if trace.weight != "tokens":
        raise ValueError("the costed routing sweep reads token weights")
    ids = trace.ids
    offsets = np.zeros(trace.ends.shape[0] + 1, dtype=np.int64)
    offsets[1:] = trace.ends
    if ids.shape[0]:
        _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
        rank = np.empty_like(first)
        rank[np.argsort(first, kind="stable")] = np.arange(first.shape[0])
        dense = rank[inverse.reshape(-1)].astype(np.int64)
    else:
        dense = ids
    first_ids = tuple(tuple(int(x) for x in ids[offsets[r]:min(offsets[r] + 2, offsets[r + 1])])
                      for r in range(offsets.shape[0] - 1))
    summary = trace.summary
    reqs = Requests(summary.path.name if summary.path else "", summary.sha256, offsets, dense,
                    first_ids)
    tokens = prefix_curve_of(trace)
    blocks = prefix_curve_of(replace(trace, weights=np.ones_like(trace.weights),
                                     weight="blocks"))
    return PrefixRequests(reqs, trace.weights, blocks, tokens)


def read_prefix_requests(path: Path, window: Window | None = None) -> PrefixRequests:
    """Read, validate and hash ``path`` (or ``window`` of it) once, with token weights."""
    pr = prefix_requests(read_prefix_trace(Path(path), "tokens", window))
    return replace(pr, reqs=replace(pr.reqs, name=str(path)))


@dataclass(frozen=True)
class PrefixRun:
    """One (total capacity, hosts, routing): per-host prefix caches, their flat accounting, the
    pooled prefix cache under the same route, and Belady with bypass per host."""

    routing: str
    hosts: int
    capacity: int  # per host
    hits: tuple[int, ...]  # per host, prefix hits (blocks)
    hit_tokens: tuple[int, ...]
    references: tuple[int, ...]
    tokens: tuple[int, ...]
    flat_hits: tuple[int, ...]  # per host, touches that hit (flat LRU over tail-first touches)
    distinct: tuple[int, ...]  # per host, distinct blocks of its sub-trace
    bypass: tuple[int, ...]  # per host, Belady with bypass hits of its sub-trace
    peak: tuple[int, ...]
    load: tuple[int, ...]
    joint_local: int
    joint_elsewhere: int  # e: touches missing on their host while another host caches them
    joint_nowhere: int
    pool_local: int  # pooled: leading-run blocks on the request's host
    pool_remote: int
    pool_misses: int
    pool_local_tokens: int
    pool_remote_tokens: int
    pool_miss_tokens: int
    pool_peak: tuple[int, ...]  # per host, most blocks living there at once

    @property
    def total_hits(self) -> int:
        return sum(self.hits)

    @property
    def flat_misses(self) -> int:
        """The per-host flat misses: touches missing on their host (perInstanceMisses)."""
        return sum(self.references) - sum(self.flat_hits)


@dataclass(frozen=True)
class PooledPrefix:
    """One pooled cache of ``capacity`` blocks: its exact prefix hits (blocks, tokens) from
    the curve, and Belady with bypass's flat hits on the whole trace."""

    capacity: int
    hits: int
    hit_tokens: int
    bypass_hits: int


@dataclass(frozen=True)
class PrefixSweep:
    """The costed sweep's counts: per total capacity the pooled figures, per (capacity, hosts,
    routing) a :class:`PrefixRun`; and the trace's counts."""

    name: str
    sha256: str
    requests: int
    references: int
    tokens: int
    distinct: int
    longest: int
    hosts: tuple[int, ...]
    capacities: tuple[int, ...]
    pooled: tuple[PooledPrefix, ...]
    runs: tuple[PrefixRun, ...]

    def run(self, capacity: int, hosts: int, routing: str) -> PrefixRun:
        return find_run(self.runs, capacity, hosts, routing)

    def pooled_at(self, capacity: int) -> PooledPrefix:
        return find_pooled(self.pooled, capacity)


# --------------------------------------------------------------------------- the sweep


def simulate_prefix(pr: PrefixRequests, routing: str, route: np.ndarray | None, hosts: int,
                    capacity: int) -> PrefixRun:
    """Per-host prefix caches of ``capacity`` blocks under ``route`` (``None``: kv-aware), the
    pooled cache of ``hosts * capacity`` blocks under the same route, and Belady with bypass
    on each host's sub-trace."""
    reqs = pr.reqs
    if capacity < 0 or hosts < 1:
        raise ValueError(f"need hosts >= 1 and capacity >= 0, got {hosts}, {capacity}")
    if hosts * max(reqs.distinct, 1) >= 2**31:
        raise ValueError(f"{hosts} hosts x {reqs.distinct} blocks: beyond the int32 tables")
    kv_aware = route is None
    chosen = (np.zeros(reqs.requests, dtype=np.int64) if kv_aware
              else np.ascontiguousarray(route, dtype=np.int64))
    if not kv_aware and chosen.shape[0] and (chosen.min() < 0 or chosen.max() >= hosts):
        raise ValueError(f"a route outside hosts 0..{hosts - 1}")
    blocks = max(reqs.distinct, 1)
    out = np.zeros((hosts, 8), dtype=np.int64)
    joint = np.zeros(3, dtype=np.int64)
    _routed_prefix(reqs.offsets, reqs.ids, pr.tokens, chosen, hosts, capacity, blocks,
                   kv_aware, KV_AWARE_SLACK_PERCENT, out, joint)
    pool = np.zeros(6, dtype=np.int64)
    pool_peak = np.zeros(hosts, dtype=np.int64)
    _pooled_prefix(reqs.offsets, reqs.ids, pr.tokens, chosen, hosts, capacity * hosts, blocks,
                   pool, pool_peak)
    host_of_ref = np.repeat(chosen, np.diff(reqs.offsets))
    bypass = tuple(int(_bypass_hits(reqs.ids[host_of_ref == h], capacity, blocks))
                   for h in range(hosts))

    def col(j: int) -> tuple[int, ...]:
        return tuple(int(v) for v in out[:, j])

    return PrefixRun(routing, hosts, capacity, col(0), col(1), col(2), col(3), col(4),
                     col(7), bypass, col(5), col(6), *(int(v) for v in joint),
                     *(int(v) for v in pool), tuple(int(v) for v in pool_peak))


#: Simulates one (routing, hosts, per-host capacity): injectable so tests can plant a fault.
PrefixSimulator = Callable[[PrefixRequests, str, "np.ndarray | None", int, int], PrefixRun]

def run_prefix_sweep(pr: PrefixRequests, hosts: Sequence[int] = HOSTS,
                     capacities: Sequence[int] | None = None,
                     routings: Sequence[str] = ROUTINGS,
                     simulate: PrefixSimulator = simulate_prefix,
                     progress: StepProgress | None = None) -> PrefixSweep:
    """Every (total capacity, hosts, routing) on one parse of the trace (unchecked: the checks
    and the prices are :mod:`.routing_cost`'s)."""
    reqs = pr.reqs
    caps = checked_capacities(reqs, hosts, capacities)
    total = sweep_steps(caps, hosts, routings)
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    pooled = []
    for c in caps:
        pooled.append(PooledPrefix(c, pr.curve_blocks.at(c), pr.curve_tokens.at(c),
                                   bypass_hits(reqs.ids, c, reqs.distinct)))
        tick()
    routes = {(r, h): static_route(reqs, r, h) for r in routings if r != "kv-aware"
              for h in hosts}
    runs = []
    for c in caps:
        for h in hosts:
            for r in routings:
                runs.append(simulate(pr, r, routes.get((r, h)), h, c // h))
                tick()
    return PrefixSweep(reqs.name, reqs.sha256, reqs.requests, reqs.references,
                       int(pr.tokens.sum()), reqs.distinct, pr.curve_blocks.longest,
                       tuple(hosts), caps, tuple(pooled), tuple(runs))
