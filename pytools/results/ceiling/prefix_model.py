"""The prefix-cache model of :mod:`.prefix_optima_record` on a window of requests: its reuse
intervals, its prefix wall capacity, and an independent replay of a kept-interval assignment
into the states it stands for (prefix-closed, demand fetch, within the capacity), counting the
prefix hits; radix LRU's hits from the prefix curve, for comparison. No solver here."""

from __future__ import annotations

import hashlib
import heapq
import json
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

from pytools.traces.prefix import PrefixTrace, prefix_curve_of
from pytools.traces.trace import ScanSummary, TraceError


class PrefixOptimaError(ValueError):
    """A bad prefix-optima record, window or solution (the message names the problem)."""


@dataclass(frozen=True)
class PrefixIntervals:
    """The reuse intervals of a window of requests: interval ``i`` keeps ``blocks[i]`` from
    request ``starts[i]`` to request ``ends[i]`` (consecutive requests containing it, 0-based
    in the window), in order of (start, block's position in that request)."""

    requests: int
    distinct: int
    blocks: tuple[int, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    parent: dict[int, int]  # block -> its parent (-1: the first block of its requests)


def prefix_intervals(requests: Sequence[Sequence[int]]) -> PrefixIntervals:
    """The reuse intervals of ``requests``; raises :class:`PrefixOptimaError` when an id
    follows two different predecessors (ids not chained; chained ids cannot repeat within a
    request: the later copy would follow another predecessor than the first)."""
    parent: dict[int, int] = {}
    last: dict[int, int] = {}
    found: list[tuple[int, int, int, int]] = []
    for t, req in enumerate(requests):
        prev = -1
        for j, b in enumerate(req):
            if parent.setdefault(b, prev) != prev:
                raise PrefixOptimaError(f"request {t}: block {b} follows {prev}, before "
                                        f"{parent[b]}: ids are not chained")
            if b in last:
                found.append((last[b], j, b, t))
            last[b] = t
            prev = b
    found.sort()
    return PrefixIntervals(len(requests), len(last), tuple(f[2] for f in found),
                           tuple(f[0] for f in found), tuple(f[3] for f in found), parent)


def prefix_wall_capacity(iv: PrefixIntervals) -> int:
    """The most reuse intervals alive after one request (started at or before it, ending
    after it): keeping them all is prefix-closed, so from this capacity on every reuse hits."""
    delta = [0] * (iv.requests + 1)
    for p, q in zip(iv.starts, iv.ends, strict=True):
        delta[p] += 1
        delta[q] -= 1
    alive = best = 0
    for change in delta:
        alive += change
        best = max(best, alive)
    return best


def replay_kept(requests: Sequence[Sequence[int]], capacity: int, iv: PrefixIntervals,
                kept: Sequence[bool]) -> int:
    """Replay the states a kept-interval assignment stands for (``S_t``: the blocks of the
    kept intervals alive after request ``t``) and return the prefix hits: each request's
    longest leading run held before it. Raises :class:`PrefixOptimaError` when a state is
    not closed under prefixes or holds more than ``capacity`` blocks."""
    if len(kept) != len(iv.blocks):
        raise PrefixOptimaError(f"the solution has {len(kept)} intervals, the window "
                                f"{len(iv.blocks)}")
    ending: list[list[int]] = [[] for _ in range(iv.requests)]
    starting: list[list[int]] = [[] for _ in range(iv.requests)]
    for i, keep in enumerate(kept):
        if keep:
            starting[iv.starts[i]].append(iv.blocks[i])
            ending[iv.ends[i]].append(iv.blocks[i])
    held: set[int] = set()
    children: dict[int, int] = {}
    hits = 0
    for t, req in enumerate(requests):
        for b in req:  # the longest leading run held before the request
            if b not in held:
                break
            hits += 1
        for b in ending[t]:
            held.discard(b)
            children[iv.parent[b]] = children.get(iv.parent[b], 0) - 1
        for b in starting[t]:
            held.add(b)
            children[iv.parent[b]] = children.get(iv.parent[b], 0) + 1
        if len(held) > capacity:
            raise PrefixOptimaError(f"after request {t}: {len(held)} blocks held, over the "
                                    f"capacity {capacity}")
        for b in req:
            p = iv.parent[b]
            if b in held and p >= 0 and p not in held:
                raise PrefixOptimaError(f"after request {t}: block {b} held without its "
                                        f"parent {p} (not closed under prefixes)")
            if b not in held and children.get(b, 0) > 0:
                raise PrefixOptimaError(f"after request {t}: block {b} dropped while a "
                                        "child of it is held (not closed under prefixes)")
    return hits


def encode_kept(kept: Sequence[bool]) -> str:
    """A kept-interval assignment as hex (bit i of the big-endian bit string: interval i)."""
    bits = np.packbits(np.array(kept, dtype=bool)) if len(kept) else np.zeros(0, np.uint8)
    return bytes(bits).hex()


def decode_kept(text: str, n: int) -> list[bool]:
    """Inverse of :func:`encode_kept` for ``n`` intervals; raises :class:`PrefixOptimaError`
    when the text is not hex of the right length or sets a bit past ``n``."""
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raise PrefixOptimaError("the kept intervals are not hex") from None
    if len(raw) != (n + 7) // 8:
        raise PrefixOptimaError(f"the kept intervals have {len(raw)} bytes, {n} intervals "
                                f"need {(n + 7) // 8}")
    bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8)).astype(bool)
    if bits[n:].any():
        raise PrefixOptimaError("the kept intervals set a bit past the last interval")
    return [bool(x) for x in bits[:n]]


def requests_sha256(requests: Sequence[Sequence[int]]) -> str:
    """SHA-256 of a window's requests written as a compact JSON array of arrays."""
    data = json.dumps([list(r) for r in requests], separators=(",", ":")).encode()
    return hashlib.sha256(data).hexdigest()


def capacity_of(wall_cap: int, fraction: Fraction) -> int:
    """The capacity a window is solved at: ``floor(fraction * prefix wall capacity)``."""
    return (fraction.numerator * wall_cap) // fraction.denominator


def radix_lru_hits(requests: Sequence[Sequence[int]], capacity: int) -> int:
    """Prefix hits (blocks) of the prefix curve's LRU (:mod:`pytools.traces.prefix`) on the
    window from an empty cache: radix LRU where ``capacity`` is at least the longest
    request."""
    ids = np.array([b for r in requests for b in r], dtype=np.int64)
    ends = np.cumsum([len(r) for r in requests], dtype=np.int64)
    summary = ScanSummary(path=Path("window"), sha256="", requests=len(requests),
                          references=int(ids.shape[0]), lines=len(requests), window=None)
    trace = PrefixTrace(summary, ids, ends, np.ones(ids.shape[0], np.int64), "blocks", 1)
    try:
        return prefix_curve_of(trace).at(capacity)
    except TraceError as exc:
        raise PrefixOptimaError(str(exc)) from None


@dataclass(frozen=True)
class WindowFacts:
    """What the record states of a window that the trace alone decides."""

    requests: int
    references: int
    distinct_blocks: int
    longest_request: int
    reuse_intervals: int
    prefix_wall_capacity: int
    requests_sha256: str


def window_facts(requests: Sequence[Sequence[int]], iv: PrefixIntervals) -> WindowFacts:
    """The facts of a window (see :class:`WindowFacts`)."""
    return WindowFacts(len(requests), sum(len(r) for r in requests), iv.distinct,
                       max((len(r) for r in requests), default=0), len(iv.blocks),
                       prefix_wall_capacity(iv), requests_sha256(requests))


def window_requests(requests: Sequence[Sequence[int]], first_line: int, last_line: int
                    ) -> tuple[tuple[int, ...], ...]:
    """The requests of lines ``first_line..last_line`` (1-based, inclusive)."""
    if not 1 <= first_line <= last_line <= len(requests):
        raise PrefixOptimaError(f"window {first_line}:{last_line} is not inside the trace's "
                                f"{len(requests)} lines")
    return tuple(tuple(r) for r in requests[first_line - 1:last_line])


def belady_bypass_kept(requests: Sequence[Sequence[int]], capacity: int,
                       iv: PrefixIntervals) -> tuple[list[bool], int]:
    """Belady with bypass run on the window's flat block stream (on a miss in a full cache,
    drop the cached or requested block whose next use is farthest, the requested one on a
    tie), read as a kept-interval assignment: ``(p, q)`` kept when the block's reference in
    request ``q`` hits. Returns the assignment and the run's flat hits.

    With chained ids a block's parent is referenced before it in every request containing
    it, so the parent's next use comes first and the run never drops a parent while keeping
    a child that is used again: the assignment is a prefix-cache run of the same hits
    (:func:`replay_kept` checks it), so the flat optimum is then the prefix optimum."""
    stream = [b for r in requests for b in r]
    nxt = [0] * len(stream)
    seen: dict[int, int] = {}
    for i in range(len(stream) - 1, -1, -1):
        nxt[i] = seen.get(stream[i], len(stream))
        seen[stream[i]] = i
    hit = [False] * len(stream)
    if capacity > 0:
        cache: dict[int, int] = {}
        heap: list[tuple[int, int]] = []
        for i, block in enumerate(stream):
            use = nxt[i]
            if block in cache:
                hit[i] = True
            elif len(cache) >= capacity:
                while cache.get(heap[0][1]) != -heap[0][0]:
                    heapq.heappop(heap)  # stale entry
                if use >= -heap[0][0]:
                    continue  # bypass
                del cache[heapq.heappop(heap)[1]]
            cache[block] = use
            heapq.heappush(heap, (-use, block))
    position: dict[tuple[int, int], int] = {}
    i = 0
    for t, req in enumerate(requests):
        for b in req:
            position[(t, b)] = i
            i += 1
    kept = [hit[position[(q, b)]] for b, q in zip(iv.blocks, iv.ends, strict=True)]
    return kept, sum(hit)
