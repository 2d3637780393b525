"""Belady with bypass against Belady without, on a block-reference stream.

With the Lean model's semantics (``KVCache.Ceiling.bstep``, Proofs/Ceiling/Bypass.lean): a hit
leaves the cache unchanged, a miss with room stores the block, and a miss in a full cache
drops one block of the cache and the requested one, the one whose next request is farthest
(on a tie, the requested block: it is not stored). Lean proves this rule optimal among every
policy that may decline to store a missed block (``bhits_le_beladyBypass_bhits``) and at least
Belady without bypass (``belady_hits_le_beladyBypass_bhits``), at every capacity; the figures
here are Python simulations, checked against that inequality.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from .policies import next_uses
from .trace import percent_str

#: The Lean theorems the bypass table rests on (Proofs/Ceiling/Bypass.lean).
BYPASS_THEOREMS: tuple[str, ...] = (
    "KVCache.Ceiling.bhits_le_beladyBypass_bhits",
    "KVCache.Ceiling.belady_hits_le_beladyBypass_bhits",
    "KVCache.Ceiling.hits_le_beladyBypass_bhits",
    "KVCache.Ceiling.bhits_toBypass",
    "KVCache.Ceiling.bypass_gains_example",
    "KVCache.Ceiling.beladyBypass_bhits_eq_belady_hits_of_distinct_le",
    "KVCache.Ceiling.bhits_add_distinct_le_length",
    "KVCache.Ceiling.bhits_zero",
)

#: How the bypass figures are computed, stated in the certificate.
BYPASS_METHOD = (
    "Python simulation (pytools.results.ceiling.bypass.simulate_belady_bypass), one capacity "
    "at a time: next uses precomputed, a max-heap of cached blocks by next use; on a miss in a "
    "full cache the requested block is not stored when its next use is no earlier than every "
    "cached block's, else the farthest cached block is evicted. Belady without bypass is the "
    "sweep's OPT column (curve_method)."
)


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


@dataclass(frozen=True)
class BypassRow:
    """Hits of Belady without and with bypass at one capacity."""

    capacity: int
    belady_hits: int
    bypass_hits: int

    @property
    def gain(self) -> int:
        """Hits bypass adds."""
        return self.bypass_hits - self.belady_hits


def bypass_rows(stream: Sequence[int], belady: Sequence[tuple[int, int]]) -> list[BypassRow]:
    """For each ``(capacity, Belady's hits)`` of ``belady``, Belady with bypass simulated on
    ``stream`` at that capacity. Raises ``ValueError`` when a figure contradicts Lean's
    ``belady_hits_le_beladyBypass_bhits`` (bypass below Belady) or the ceiling
    ``bhits_add_distinct_le_length``."""
    top = len(stream) - len(set(stream))
    rows = []
    for capacity, belady_hits in belady:
        row = BypassRow(capacity, belady_hits, simulate_belady_bypass(stream, capacity))
        check_row(row, top)
        rows.append(row)
    return rows


def check_row(row: BypassRow, ceiling_hits: int) -> None:
    """Refuse a row that the theorems contradict: bypass below Belady, or above the ceiling
    ``ceiling_hits`` (references - distinct)."""
    if row.bypass_hits < row.belady_hits:
        raise ValueError(f"capacity {row.capacity}: Belady with bypass {row.bypass_hits} < "
                         f"Belady {row.belady_hits} hits, against "
                         "belady_hits_le_beladyBypass_bhits")
    if row.bypass_hits > ceiling_hits:
        raise ValueError(f"capacity {row.capacity}: Belady with bypass {row.bypass_hits} hits "
                         f"> ceiling {ceiling_hits}, against bhits_add_distinct_le_length")


def bypass_figures(rows: Sequence[BypassRow], references: int) -> dict[str, object]:
    """The certificate's bypass table: hits and hit rates with and without bypass, and the
    difference, at each capacity of ``rows``."""
    return {
        "label": "Belady (OPT) without bypass against Belady with bypass, whole trace, at the "
                 "sweep's capacities, from an empty cache",
        "method": BYPASS_METHOD,
        "theorems": list(BYPASS_THEOREMS),
        "rows": [{
            "capacity": r.capacity,
            "belady_hits": r.belady_hits,
            "belady_bypass_hits": r.bypass_hits,
            "gain_hits": r.gain,
            "belady_percent": percent_str(Fraction(r.belady_hits, references)),
            "belady_bypass_percent": percent_str(Fraction(r.bypass_hits, references)),
            "gain_percent_points": percent_str(Fraction(r.gain, references)),
        } for r in rows],
        "computed_by": "Python (pytools), from the hashed trace file; not computed by the Lean "
                       "kernel",
    }
