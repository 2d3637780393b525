"""Cache replacement policies simulated on a block-reference stream: LRU, FIFO and Belady
(farthest next use, offline), with the Lean model's semantics (``KVCache.Ceiling.step``): a hit
leaves the cache unchanged, a miss inserts the block after evicting one if the cache is full;
a cache of capacity 0 stores nothing, so it never hits (Lean: ``KVCache.Ceiling.hits_zero``).
"""

from __future__ import annotations

import heapq
from collections import OrderedDict, deque
from collections.abc import Sequence

#: Policies :func:`simulate` knows.
POLICIES: tuple[str, ...] = ("lru", "fifo", "belady")


# ----------------------------------------------------------------------------- policies


def _check_capacity(capacity: int) -> None:
    if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 0:
        raise ValueError(f"capacity must be a non-negative integer, got {capacity!r}")


def simulate_lru(stream: Sequence[int], capacity: int) -> int:
    """Hits of least-recently-used eviction with ``capacity`` blocks."""
    _check_capacity(capacity)
    if capacity == 0:
        return 0  # nothing is stored
    cache: OrderedDict[int, None] = OrderedDict()
    hits = 0
    move = cache.move_to_end
    for block in stream:
        if block in cache:
            hits += 1
            move(block)
        else:
            if len(cache) >= capacity:
                cache.popitem(last=False)
            cache[block] = None
    return hits


def simulate_fifo(stream: Sequence[int], capacity: int) -> int:
    """Hits of first-in-first-out eviction with ``capacity`` blocks (hits do not reorder)."""
    _check_capacity(capacity)
    if capacity == 0:
        return 0  # nothing is stored
    cache: set[int] = set()
    order: deque[int] = deque()
    hits = 0
    for block in stream:
        if block in cache:
            hits += 1
        else:
            if len(cache) >= capacity:
                cache.discard(order.popleft())
            cache.add(block)
            order.append(block)
    return hits


def next_uses(stream: Sequence[int]) -> list[int]:
    """``result[i]``: the next position after ``i`` requesting ``stream[i]``, else ``len``."""
    n = len(stream)
    result = [n] * n
    last: dict[int, int] = {}
    for i in range(n - 1, -1, -1):
        block = stream[i]
        result[i] = last.get(block, n)
        last[block] = i
    return result


def simulate_belady(stream: Sequence[int], capacity: int) -> int:
    """Hits of Belady's offline policy (evict the block whose next use is farthest).

    O(n log n): next uses are precomputed once, and the cache keeps a max-heap of
    ``(next use, block)`` with lazy deletion (an entry is stale when the block left the
    cache or its next use moved on); the future is never rescanned.
    """
    _check_capacity(capacity)
    if capacity == 0:
        return 0  # nothing is stored
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
            while True:
                neg, victim = pop(heap)
                if cache.get(victim) == -neg:
                    del cache[victim]
                    break
        cache[block] = use
        push(heap, (-use, block))
    return hits


_SIMULATORS = {"lru": simulate_lru, "fifo": simulate_fifo, "belady": simulate_belady}


def simulate(stream: Sequence[int], capacity: int, policy: str) -> int:
    """Hits of ``policy`` (``lru``, ``fifo`` or ``belady``) on ``stream`` at ``capacity``."""
    try:
        run = _SIMULATORS[policy]
    except KeyError:
        raise ValueError(f"unknown policy {policy!r} (known: {', '.join(POLICIES)})") from None
    return run(stream, capacity)
