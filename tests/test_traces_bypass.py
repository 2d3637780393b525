"""Belady with bypass (pytools.traces.bypass) against the Lean model
(Proofs/Ceiling/Bypass.lean), brute-force optima and Belady without bypass."""

from __future__ import annotations

import functools
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytools.traces.bypass import simulate_belady_bypass
from pytools.traces.policies import simulate
from pytools.traces.trace import count_distinct

# ----------------------------------------------------------------------------- references


def naive_bypass(stream: list[int], capacity: int) -> int:
    """The Lean model step by step (``KVCache.Ceiling.bstep`` with ``beladyBypass``),
    rescanning the future: the cache is a list, newest first; a miss in a full cache drops
    the first element of ``x :: cache`` with the farthest next request (``argmaxBy``)."""
    cache: list[int] = []
    hits = 0
    for i, x in enumerate(stream):
        if x in cache:
            hits += 1
            continue
        if len(cache) < capacity:
            cache.insert(0, x)
            continue
        future = stream[i + 1:]
        options = [x, *cache]
        scores = [future.index(y) if y in future else len(future) for y in options]
        options.pop(scores.index(max(scores)))
        cache = options
    return hits


def best_in_lean_class(stream: list[int], capacity: int) -> int:
    """``KVCache.Ceiling.bopt``: most hits over every sequence of choices of the bypass class
    (a miss with room stores; a miss in a full cache drops any block of cache + requested)."""

    @functools.cache
    def go(i: int, cache: frozenset[int]) -> int:
        if i == len(stream):
            return 0
        x = stream[i]
        if x in cache:
            return 1 + go(i + 1, cache)
        if len(cache) < capacity:
            return go(i + 1, cache | {x})
        grown = cache | {x}
        return max(go(i + 1, grown - {v}) for v in grown)

    return go(0, frozenset())


def best_demand_fetch(stream: list[int], capacity: int) -> int:
    """Most hits over every demand-fetch run (placement's ``DemandFetch``): after each
    request the cache may become any subset of the old cache plus the requested block, of at
    most ``capacity`` blocks (bypass and eviction at any time, full or not)."""

    @functools.cache
    def go(i: int, cache: frozenset[int]) -> int:
        if i == len(stream):
            return 0
        x = stream[i]
        hit = 1 if x in cache else 0
        pool = sorted(cache | {x})
        best = 0
        for size in range(min(capacity, len(pool)) + 1):
            for keep in itertools.combinations(pool, size):
                best = max(best, go(i + 1, frozenset(keep)))
        return hit + best

    return go(0, frozenset())


# ----------------------------------------------------------------------------- hand-made


def test_bypass_gains_on_the_lean_example() -> None:
    # [a, b, a] at k = 1: bypass keeps a and hits once; storing b costs that hit
    # (Lean: bypass_gains_example).
    assert simulate_belady_bypass([1, 2, 1], 1) == 1
    assert simulate([1, 2, 1], 1, "belady") == 0
    assert naive_bypass([1, 2, 1], 1) == 1
    assert best_demand_fetch([1, 2, 1], 1) == 1


def test_known_small_answers() -> None:
    assert simulate_belady_bypass([], 3) == 0
    assert simulate_belady_bypass([5, 5, 5], 0) == 0  # capacity 0 stores nothing
    assert simulate_belady_bypass([5, 5, 5], 1) == 2
    # a hot block among one-shot ones: without bypass each one-shot block evicts it
    hot = [0, 1, 0, 2, 0, 3, 0]
    assert simulate(hot, 1, "belady") == 0
    assert simulate_belady_bypass(hot, 1) == 3


def test_bad_capacity() -> None:
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="capacity"):
            simulate_belady_bypass([1], bad)  # type: ignore[arg-type]


streams = st.lists(st.integers(min_value=0, max_value=7), max_size=40)
capacities = st.integers(min_value=0, max_value=9)


@given(streams, capacities)
def test_fast_simulator_matches_the_lean_model(stream: list[int], capacity: int) -> None:
    assert simulate_belady_bypass(stream, capacity) == naive_bypass(stream, capacity)


@given(streams, capacities)
def test_bypass_at_least_belady_and_below_the_ceiling(stream: list[int], capacity: int) -> None:
    b = simulate_belady_bypass(stream, capacity)
    assert simulate(stream, capacity, "belady") <= b
    assert b + count_distinct(stream) <= len(stream)


@given(streams, st.integers(min_value=0, max_value=5))
def test_equal_once_capacity_covers_distinct(stream: list[int], extra: int) -> None:
    k = max(count_distinct(stream), 1) + extra
    assert simulate_belady_bypass(stream, k) == simulate(stream, k, "belady")


@settings(max_examples=60)
@given(st.lists(st.integers(min_value=0, max_value=4), max_size=9),
       st.integers(min_value=0, max_value=3))
def test_bypass_is_optimal_on_small_streams(stream: list[int], capacity: int) -> None:
    # optimal in the Lean class (bopt) and in placement's wider demand-fetch class
    b = simulate_belady_bypass(stream, capacity)
    assert b == best_in_lean_class(stream, capacity)
    assert b == best_demand_fetch(stream, capacity)
