"""Tests of pytools.traces: the policies against the Lean model and brute force, the reader
(counts, hashes, bad lines named by file and line). The ceiling result's sweep, evidence and
generated Lean instance are tested in tests/test_ceiling.py."""

from __future__ import annotations

import functools
import hashlib
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from pytools.results.ceiling.cli import main
from pytools.traces.policies import POLICIES, next_uses, simulate
from pytools.traces.trace import (
    TraceError,
    ceiling_counts,
    count_distinct,
    percent_str,
)

# ----------------------------------------------------------------------------- references


def naive(stream: list[int], capacity: int, policy: str) -> int:
    """The Lean model step by step (``KVCache.Ceiling.step``), rescanning past and future:
    the cache is a list, newest first; a miss in a full cache evicts the first element with
    the largest score (LRU: steps since the last use, Belady: steps to the next use); at
    capacity 0 a miss stores nothing."""
    cache: list[int] = []
    hits = 0
    for i, x in enumerate(stream):
        if x in cache:
            hits += 1
            continue
        if len(cache) < capacity:
            cache.insert(0, x)
            continue
        if capacity == 0:
            continue
        if len(cache) >= capacity:
            if policy == "fifo":
                victim = len(cache) - 1
            else:
                if policy == "lru":
                    past = stream[:i][::-1]

                    def score(y: int, past: list[int] = past) -> int:
                        return past.index(y) if y in past else len(past)
                else:
                    future = stream[i + 1:]

                    def score(y: int, future: list[int] = future) -> int:
                        return future.index(y) if y in future else len(future)
                scores = [score(y) for y in cache]
                victim = scores.index(max(scores))
            del cache[victim]
        cache.insert(0, x)
    return hits


def best_possible(stream: list[int], capacity: int) -> int:
    """Most hits over every sequence of eviction choices (exhaustive search)."""

    @functools.cache
    def go(i: int, cache: frozenset[int]) -> int:
        if i == len(stream):
            return 0
        x = stream[i]
        if x in cache:
            return 1 + go(i + 1, cache)
        if len(cache) < capacity:
            return go(i + 1, cache | {x})
        if capacity == 0:
            return go(i + 1, cache)  # nothing is stored
        return max(go(i + 1, (cache - {v}) | {x}) for v in cache)

    return go(0, frozenset())


def scan_stream(hot: int, rounds: int) -> list[int]:
    """``hot`` hot blocks, then per round two fresh one-shot blocks and the hot blocks again."""
    stream = list(range(hot))
    fresh = 1000
    for _ in range(rounds):
        stream += [fresh, fresh + 1] + list(range(hot))
        fresh += 2
    return stream


# ----------------------------------------------------------------------------- hand-made


def test_scan_stream_matches_lean_example() -> None:
    # The same stream and answers as KVCache.Ceiling.scanStream_hits (kernel-checked).
    s = [1, 2, 10, 11, 1, 2, 12, 13, 1, 2]
    assert count_distinct(s) == 6
    assert simulate(s, 3, "belady") == 4 == len(s) - 6
    assert simulate(s, 3, "lru") == 0
    assert simulate(s, 3, "fifo") == 0


def test_lru_far_from_ceiling_belady_reaches_it() -> None:
    s = scan_stream(hot=8, rounds=50)
    ceiling = len(s) - count_distinct(s)
    assert ceiling == 8 * 50
    assert simulate(s, 9, "belady") == ceiling
    assert simulate(s, 9, "lru") == 0
    assert simulate(s, 9, "fifo") == 0


def test_known_small_answers() -> None:
    assert simulate([5] * 6, 1, "lru") == 5
    cyc = [1, 2, 3] * 4
    assert simulate(cyc, 2, "lru") == 0
    assert simulate(cyc, 2, "fifo") == 0
    assert simulate(cyc, 2, "belady") == best_possible(cyc, 2) == 5
    for policy in POLICIES:
        assert simulate(cyc, 3, policy) == 9
        assert simulate([], 3, policy) == 0


@given(st.lists(st.integers(min_value=0, max_value=7), max_size=40))
def test_capacity_zero_stores_nothing(stream: list[int]) -> None:
    # KVCache.Ceiling.hits_zero: a cache of capacity 0 never hits, whatever the policy.
    for policy in POLICIES:
        assert simulate(stream, 0, policy) == 0 == naive(stream, 0, policy)
    assert best_possible(stream, 0) == 0


def test_capacity_zero_on_a_repeat() -> None:
    # The example: [a, a] hits once at capacity 1, never at capacity 0.
    for policy in POLICIES:
        assert simulate([7, 7], 1, policy) == 1
        assert simulate([7, 7], 0, policy) == 0


def test_capacity_zero_planted_model_fails() -> None:
    # Planted defect: the old model, where capacity 0 inserted on a miss as capacity 1 did.
    def old_model(stream: list[int], capacity: int, policy: str) -> int:
        return naive(stream, max(capacity, 1), policy)

    assert old_model([7, 7], 0, "lru") == 1 != simulate([7, 7], 0, "lru")


def test_bad_capacity_and_policy() -> None:
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="capacity"):
            simulate([1], bad, "lru")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown policy"):
        simulate([1], 1, "random")


def test_next_uses() -> None:
    assert next_uses([1, 2, 1, 1, 3]) == [2, 5, 3, 5, 5]


def test_percent_rounding_is_exact() -> None:
    assert percent_str(Fraction(1, 3)) == "33.3333"
    assert percent_str(Fraction(2, 3)) == "66.6667"
    assert percent_str(Fraction(1, 1)) == "100.0000"
    assert percent_str(Fraction(1, 8), places=1) == "12.5"


# ----------------------------------------------------------------------------- properties

streams = st.lists(st.integers(min_value=0, max_value=7), max_size=40)
capacities = st.integers(min_value=0, max_value=9)


@given(streams, capacities)
def test_every_policy_below_ceiling(stream: list[int], capacity: int) -> None:
    d = count_distinct(stream)
    for policy in POLICIES:
        assert simulate(stream, capacity, policy) + d <= len(stream)


@given(streams, capacities)
def test_belady_beats_lru_and_fifo(stream: list[int], capacity: int) -> None:
    b = simulate(stream, capacity, "belady")
    assert b >= simulate(stream, capacity, "lru")
    assert b >= simulate(stream, capacity, "fifo")


@given(streams, st.integers(min_value=0, max_value=5))
def test_ceiling_reached_with_capacity_at_least_distinct(stream: list[int], extra: int) -> None:
    d = count_distinct(stream)
    for policy in POLICIES:
        assert simulate(stream, max(d, 1) + extra, policy) == len(stream) - d


@given(streams, capacities)
def test_fast_simulators_match_the_lean_model(stream: list[int], capacity: int) -> None:
    for policy in POLICIES:
        assert simulate(stream, capacity, policy) == naive(stream, capacity, policy)


@settings(max_examples=60)
@given(st.lists(st.integers(min_value=0, max_value=4), max_size=10),
       st.integers(min_value=0, max_value=3))
def test_belady_is_optimal_on_small_streams(stream: list[int], capacity: int) -> None:
    assert simulate(stream, capacity, "belady") == best_possible(stream, capacity)


# ----------------------------------------------------------------------------- loading


def write_trace(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


GOOD = [
    '{"timestamp": 0, "hash_ids": [0, 1, 2]}',
    '{"timestamp": 1, "hash_ids": [0, 3]}',
    '{"timestamp": 2, "hash_ids": [0, 1, 4, 5]}',
]


def test_load_small_trace(tmp_path: Path) -> None:
    p = write_trace(tmp_path / "t.jsonl", GOOD)
    c = ceiling_counts(p)
    assert (c.requests, c.references, c.distinct) == (3, 9, 6)
    assert c.ceiling == Fraction(3, 9)
    assert c.sha256 == hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ('{"timestamp": 3, "hash_ids": [1, 2', "malformed JSON"),
        ('{"timestamp": 3}', "missing key 'hash_ids'"),
        ('{"hash_ids": [1, "7"]}', "hash_ids[1] = '7' is not a non-negative integer"),
        ('{"hash_ids": [1.5]}', "hash_ids[0] = 1.5 is not"),
        ('{"hash_ids": [true]}', "hash_ids[0] = True is not"),
        ('{"hash_ids": [-4]}', "hash_ids[0] = -4 is not"),
        ('{"hash_ids": 7}', "'hash_ids' must be a list"),
        ("[1, 2, 3]", "expected a JSON object"),
        ("", "empty line"),
    ],
)
def test_planted_bad_line_is_named(tmp_path: Path, bad: str, message: str) -> None:
    p = write_trace(tmp_path / "bad.jsonl", [GOOD[0], GOOD[1], bad, GOOD[2]])
    with pytest.raises(TraceError) as info:
        ceiling_counts(p)
    text = str(info.value)
    assert f"{p}:3:" in text
    assert message in text
    result = CliRunner().invoke(main, ["count", str(p)])
    assert result.exit_code != 0
    assert f"{p}:3:" in result.output and message in result.output


def test_empty_and_missing_trace(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(TraceError, match="no requests"):
        ceiling_counts(empty)
    with pytest.raises(TraceError, match="cannot read trace"):
        ceiling_counts(tmp_path / "absent.jsonl")
