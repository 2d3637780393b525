"""Belady with bypass against Belady without, on a block-reference stream.

With the Lean model's semantics (``KVCache.Ceiling.bstep``, Proofs/Ceiling/Bypass.lean): a hit
leaves the cache unchanged, a miss with room stores the block, and a miss in a full cache
drops one block of the cache and the requested one, the one whose next request is farthest
(on a tie, the requested block: it is not stored). Lean proves this rule optimal among every
policy that may decline to store a missed block (``bhits_le_beladyBypass_bhits``) and at least
Belady without bypass (``belady_hits_le_beladyBypass_bhits``), at every capacity; this module
simulates the rule in Python (whoever states its figures checks them against that inequality).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

from .policies import next_uses


def simulate_belady_bypass(stream: Sequence[int], capacity: int) -> int:
    """Hits of Belady with bypass at ``capacity``: on a miss in a full cache, drop the block
    of the cache and the requested one whose next use is farthest (the requested one on a
    tie, so it is not stored). O(n log n), lazy deletion as in
    :func:`.policies.simulate_belady`."""
    if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 0:
        raise ValueError(f"capacity must be a non-negative integer, got {capacity!r}")
    if capacity == 0:
        return 0  # only the requested block can be dropped: nothing is stored
    nxt = next_uses(stream)
    cache: dict[int, int] = {}  # block -> position of its next use
    heap: list[tuple[int, int]] = []  # (-next use, block), possibly stale
    push, pop = heapq.heappush, heapq.heappop
    hits = 0
    for i, block in enumerate(stream):
        use = nxt[i]
        if block in cache:
            hits += 1
        elif len(cache) >= capacity:
            while cache.get(heap[0][1]) != -heap[0][0]:
                pop(heap)  # stale entry
            if use >= -heap[0][0]:
                continue  # bypass: the requested block is used no sooner than any cached one
            del cache[pop(heap)[1]]
        cache[block] = use
        push(heap, (-use, block))
    return hits

