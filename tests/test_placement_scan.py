"""The scan family of ``Proofs/Placement/Scan.lean`` replayed with the project's own LRU
(:func:`pytools.traces.policies.simulate_lru`, not the Lean model): one pooled LRU cache of 2
blocks misses ``3 * n`` times on ``scanTrace n``, LRU with 1 block on each of the two hosts
``2 * n + 1`` times, so the pooled cache misses ``n - 1`` more for every ``n >= 2`` (what
``pooled_lru_scan_gt_perInstance`` states). A trace without the scan is the control: there the
pooled cache does not lose."""

from __future__ import annotations

import pytest

from pytools.traces.policies import simulate_lru


def scan_trace(n: int) -> list[tuple[int, int]]:
    """``scanTrace n`` of Scan.lean: round ``i`` is ``(0, 0), (1, 2i + 1), (1, 2i + 2)``."""
    return [r for i in range(n) for r in ((0, 0), (1, 2 * i + 1), (1, 2 * i + 2))]


def lru_misses(stream: list[int], capacity: int) -> int:
    return len(stream) - simulate_lru(stream, capacity)


def pooled_and_per_host(trace: list[tuple[int, int]]) -> tuple[int, int]:
    pooled = lru_misses([b for _, b in trace], 2)
    per_host = sum(lru_misses([b for h, b in trace if h == host], 1) for host in (0, 1))
    return pooled, per_host


@pytest.mark.parametrize("n", range(1, 41))
def test_the_lean_counts_are_lrus(n: int) -> None:
    pooled, per_host = pooled_and_per_host(scan_trace(n))
    assert pooled == 3 * n
    assert per_host == 2 * n + 1
    assert per_host + (n - 1) == pooled
    assert (per_host < pooled) == (n >= 2)


def test_control_without_the_scan_the_pool_does_not_lose() -> None:
    # Host 1 reuses one block instead of scanning: both blocks fit the pool, which misses
    # only the two compulsory misses, as do the per-host caches.
    trace = [r for _ in range(10) for r in ((0, 0), (1, 1), (1, 1))]
    pooled, per_host = pooled_and_per_host(trace)
    assert pooled == per_host == 2
