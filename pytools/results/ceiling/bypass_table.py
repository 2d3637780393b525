"""The certificate's bypass table: Belady without and with bypass at the sweep's capacities.

Belady with bypass is simulated by :func:`pytools.traces.bypass.simulate_belady_bypass` (the
Lean model's rule, ``KVCache.Ceiling.bstep``); each row is refused when it contradicts the
theorems it rests on (:data:`BYPASS_THEOREMS`, Proofs/Ceiling/Bypass.lean): bypass below
Belady, or above the ceiling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from pytools.traces.bypass import simulate_belady_bypass
from pytools.traces.trace import percent_str

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
    "Python simulation (pytools.traces.bypass.simulate_belady_bypass), one capacity at a "
    "time: next uses precomputed, a max-heap of cached blocks by next use; on a miss in a "
    "full cache the requested block is not stored when its next use is no earlier than every "
    "cached block's, else the farthest cached block is evicted. Belady without bypass is the "
    "sweep's OPT column (curve_method)."
)


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
