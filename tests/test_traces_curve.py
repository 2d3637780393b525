"""Exactness of ``pytools.traces.curve``: LRU and OPT hits at every capacity against an
independent recount, on traces the code was not tuned on (random, adversarial, synthetic),
and planted wrong implementations that the same check must reject."""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_traces import best_possible

from pytools.traces.curve import CurveEngine, compute_curve, stack_hits
from pytools.traces.synth import mooncake_like, write_mooncake_like
from pytools.traces.trace import Window

Curves = tuple[list[int], list[int]]


# ----------------------------------------------------------------------------- the recount


def recount(stream: Sequence[int]) -> Curves:
    """LRU and OPT hits at every capacity 1..distinct, deliberately simple and independent of
    the stack algorithms: one simulation per capacity. LRU keeps a list in recency order; OPT
    evicts, on a miss in a full cache, the cached block whose next reference is farthest
    (never again counts as farthest), found by scanning the future."""
    stream = list(stream)
    distinct = len(set(stream))
    lru_hits, opt_hits = [], []
    for k in range(1, distinct + 1):
        recent: list[int] = []
        hits = 0
        for x in stream:
            if x in recent:
                hits += 1
                recent.remove(x)
            elif len(recent) == k:
                recent.pop()
            recent.insert(0, x)
        lru_hits.append(hits)
        cache: set[int] = set()
        hits = 0
        for i, x in enumerate(stream):
            if x in cache:
                hits += 1
                continue
            if len(cache) == k:
                def next_use(y: int, i: int = i) -> int:
                    for t in range(i + 1, len(stream)):
                        if stream[t] == y:
                            return t
                    return len(stream)
                cache.remove(max(sorted(cache), key=next_use))
            cache.add(x)
        opt_hits.append(hits)
    return lru_hits, opt_hits


def fast(stream: Sequence[int], chunk: int = 7, opt_slots: int = 3) -> Curves:
    """The engine under test, fed in small chunks with a tiny first OPT array (so regrowth,
    compaction and the Fenwick tree's regrowth all happen)."""
    arr = np.asarray(list(stream), dtype=np.int64)
    parts = [arr[i : i + chunk] for i in range(0, arr.size, chunk)]
    lru, opt = stack_hits(parts, opt_slots=opt_slots, expected_refs=2)
    return lru.tolist(), opt.tolist()


def check_exact(stream: Sequence[int], curve: Callable[[Sequence[int]], Curves] = fast) -> None:
    """The curve equals the recount at every capacity (the assertion every test uses)."""
    got = curve(stream)
    want = recount(stream)
    assert got[0] == want[0], "LRU differs from the recount"
    assert got[1] == want[1], "OPT differs from the recount"


# ----------------------------------------------------------------------------- traces

ADVERSARIAL: dict[str, list[int]] = {
    "empty": [],
    "one": [5],
    "all-same": [3] * 40,
    "all-distinct": list(range(60)),
    "cyclic-4x10": list(range(4)) * 10,
    "cyclic-13x5": list(range(13)) * 5,
    "sawtooth": [*range(9), *range(8, -1, -1)] * 4,
    "scan-and-hot": [0, 1, 2, *range(100, 110), 0, 1, 2, *range(110, 120), 0, 1, 2] * 2,
    # Belady ties: many blocks never used again compete for eviction
    "ties-never-again": [1, 2, 3, 4, 5, 6, 1, 7, 8, 9, 1, 10, 11, 1],
    "ties-nested": [1, 2, 3, 3, 2, 1, 4, 4, 1, 2, 3, 5, 6, 5, 6, 1],
    "sparse-ids": [10**12, 7, 10**12, 2**40, 7, 2**40, 3, 10**12],
    "immediate-repeats": [1, 1, 2, 2, 1, 1, 3, 3, 2, 2, 1],
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_adversarial_traces(name: str) -> None:
    stream = ADVERSARIAL[name]
    if name == "sparse-ids":  # the engine wants dense ids; the driver remaps (tested below)
        stream = np.unique(stream, return_inverse=True)[1].tolist()
    check_exact(stream)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=9), max_size=70),
       st.integers(min_value=1, max_value=9), st.integers(min_value=1, max_value=6))
def test_random_traces(stream: list[int], chunk: int, slots: int) -> None:
    check_exact(stream, functools.partial(fast, chunk=chunk, opt_slots=slots))


@pytest.mark.parametrize("seed", range(6))
def test_random_wide_traces(seed: int) -> None:
    rng = random.Random(1000 + seed)
    alphabet = rng.choice([5, 20, 60])
    stream = [int(rng.paretovariate(1.1)) % alphabet for _ in range(rng.randint(80, 220))]
    check_exact(stream)


@pytest.mark.parametrize("seed", range(3))
def test_synthetic_mooncake_shaped_traces(seed: int) -> None:
    stream = [x for ids in mooncake_like(140, seed=seed, active=12) for x in ids]
    check_exact(stream)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=4), max_size=11))
def test_opt_is_the_optimum_of_every_policy(stream: list[int]) -> None:
    _, opt = fast(stream)
    assert opt == [best_possible(stream, k) for k in range(1, len(opt) + 1)]


# ----------------------------------------------------------------------------- planted bugs


def _planted_opt(stream: Sequence[int], chain: bool) -> list[int]:
    """The OPT track algorithm written plainly, with the chain step optionally left out."""
    last: dict[int, int] = {}
    b: list[int] = []
    hist: dict[int, int] = {}
    for i, x in enumerate(stream):
        p = last.get(x)
        last[x] = i
        if p is None:
            continue
        if p == i - 1:
            k = 1
        else:
            j = next((m for m, v in enumerate(b) if v <= p), len(b))
            if j == len(b):
                b.append(-1)
            carry, b[j] = b[j], i - 1
            for m in range(j + 1, len(b)) if chain else ():
                if carry < b[m] <= p:
                    b[m], carry = carry, b[m]
            k = j + 2
        hist[k] = hist.get(k, 0) + 1
    out, total = [], 0
    for k in range(1, len(set(stream)) + 1):
        total += hist.get(k, 0)
        out.append(total)
    return out


PLANTED: dict[str, Callable[[Sequence[int]], Curves]] = {
    # LRU one block short: distances counted from the previous reference exclusively
    "lru-off-by-one": lambda s: ([0, *fast(s)[0][:-1]], fast(s)[1]),
    # OPT without the chain that moves the freed track down the levels
    "opt-without-chain": lambda s: (fast(s)[0], _planted_opt(s, chain=False)),
    # OPT as LRU (a stack algorithm, but the wrong one)
    "opt-is-lru": lambda s: (fast(s)[0], fast(s)[0]),
}


def test_the_plain_opt_used_for_planting_is_right() -> None:
    for stream in ADVERSARIAL.values():
        dense = np.unique(stream, return_inverse=True)[1].tolist() if stream else []
        assert _planted_opt(dense, chain=True) == recount(dense)[1]


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_planted_wrong_curves_fail_the_exactness_check(name: str) -> None:
    streams = [ADVERSARIAL[k] for k in ("sawtooth", "ties-nested", "cyclic-13x5")]
    streams += [[x for ids in mooncake_like(120, seed=s, active=8) for x in ids]
                for s in range(3)]
    failures = 0
    for stream in streams:
        try:
            check_exact(stream, PLANTED[name])
        except AssertionError:
            failures += 1
    assert failures > 0, f"planted defect {name!r} went unnoticed"


# ----------------------------------------------------------------------------- the driver


def test_compute_curve_reads_files_windows_and_sparse_ids(tmp_path: Path) -> None:
    reqs = [[10**12, 5], [5, 7, 10**12], [2**40, 7], [5]]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps({"hash_ids": r}) + "\n" for r in reqs))
    summary, curve = compute_curve(path)
    stream = [x for r in reqs for x in r]
    assert (summary.requests, summary.references) == (4, len(stream))
    assert (curve.lru_hits.tolist(), curve.opt_hits.tolist()) == recount(stream)
    summary, curve = compute_curve(path, Window(2, 3))
    assert (summary.requests, summary.references) == (2, 5)
    assert (curve.lru_hits.tolist(), curve.opt_hits.tolist()) == recount([5, 7, 10**12, 2**40, 7])


def test_engine_over_many_chunks_equals_one_pass(tmp_path: Path) -> None:
    path = write_mooncake_like(tmp_path / "m.jsonl", 60_000, seed=3)
    _, curve = compute_curve(path)
    stream = np.asarray([x for line in path.read_text().splitlines()
                         for x in json.loads(line)["hash_ids"]], dtype=np.int64)
    engine = CurveEngine(expected_refs=10)
    for start in range(0, stream.size, 4099):
        engine.feed(stream[start : start + 4099])
    lru, opt = engine.finish()
    assert np.array_equal(lru, curve.lru_hits) and np.array_equal(opt, curve.opt_hits)
    # spot checks against the per-capacity simulators of policies.py at a few capacities
    from pytools.traces.policies import simulate_belady, simulate_lru

    as_list = stream.tolist()
    for k in (0, 1, 3, 50, 700, 5000):
        assert curve.at(k) == (simulate_lru(as_list, k), simulate_belady(as_list, k))


def test_shared_trace_curve_against_the_per_capacity_simulators(trace_path: Path) -> None:
    from pytools.traces.policies import simulate_belady, simulate_lru
    from pytools.traces.trace import load_trace

    summary, curve = compute_curve(trace_path)
    stream = list(load_trace(trace_path).stream)
    assert curve.distinct == len(set(stream)) and summary.references == len(stream)
    for k in (4, 16384):
        assert curve.at(k) == (simulate_lru(stream, k), simulate_belady(stream, k))
    assert curve.at(curve.distinct) == (len(stream) - curve.distinct,) * 2


def test_claims_window_figures(trace_path: Path) -> None:
    summary, curve = compute_curve(trace_path, Window(1201, 2000))
    assert (summary.requests, summary.references, curve.distinct) == (800, 21069, 16930)
    lru, opt = curve.at(1693)
    assert opt == 21069 - 16930 == 4139  # OPT reaches the ceiling, 19.645 %
    assert round(100 * lru / 21069, 1) == 5.5  # "LRU about 5.5 % at 1,693 blocks"


# ----------------------------------------------------------------------------- the chain


def chain_by_levels(b: list[int], j: int, carry: int, stop: int, p: int) -> list[int]:
    """The OPT chain as its definition reads, level by level: at each level after ``j`` whose
    end-time is in ``(carry, p]`` the two swap, until the carry is ``stop``."""
    b = list(b)
    m = j + 1
    while carry != stop and m < len(b):
        if carry < b[m] <= p:
            b[m], carry = carry, b[m]
        m += 1
    return b


@pytest.mark.parametrize("seed", range(40))
def test_the_compiled_chain_equals_the_chain_by_levels(seed: int) -> None:
    """The compiled chain, whose blocks of 32 levels are skipped when they hold nothing in
    ``(carry, p]`` and shifted by one level at once when every end-time in them is in
    ``(carry, p]`` and rising, against the level-by-level chain on states with such blocks
    planted (and blocks nearly so: one value out of order, or one past ``p``); the block
    bounds stay bounds of what the blocks hold."""
    from pytools.traces import curve as curve_module

    rng = random.Random(seed)
    levels = 32 * rng.randint(1, 40) + rng.choice([0, 0, 1, 17, 31])
    p = 10_000
    values: list[int] = []
    while len(values) < levels:
        kind = rng.choice(["rising", "rising", "rising-but-one", "past-p", "random", "high"])
        lo = rng.randint(0, p - 200)
        block = sorted(rng.sample(range(lo, lo + 200), 32))
        if kind == "rising-but-one":
            i = rng.randrange(31)
            block[i], block[i + 1] = block[i + 1], block[i]
        elif kind == "past-p":
            block[rng.randrange(32)] = p + rng.randint(1, 50)
        elif kind == "random":
            block = [rng.randint(0, p + 500) for _ in range(32)]
        elif kind == "high":
            block = [p + rng.randint(1, 500) for _ in range(32)]
        values.extend(block)
    values = values[:levels]
    j = rng.randrange(min(levels, 64))
    carry = rng.randint(0, p // 4)
    stop = max([carry, *(v for v in values[j + 1 :] if v <= p)])
    want = chain_by_levels(values, j, carry, stop, p)

    b = np.array(values + [0] * 40, dtype=np.int32)
    nblk = (levels + 31) >> 5
    bmin = np.array([min(values[i : i + 32]) for i in range(0, levels, 32)] + [2**31 - 1],
                    dtype=np.int32)
    bmax = np.array([max(values[i : i + 32]) for i in range(0, levels, 32)] + [-1],
                    dtype=np.int32)
    smin = np.array([min(bmin[s : s + 32]) for s in range(0, nblk, 32)] + [2**31 - 1],
                    dtype=np.int32)
    curve_module._chain(b, bmin, bmax, smin, levels, j, carry, stop, p)
    got = b[:levels].tolist()
    assert got == want
    for blk in range(nblk):
        held = got[blk * 32 : (blk + 1) * 32]
        assert bmin[blk] <= min(held) and bmax[blk] >= max(held)
        assert smin[blk >> 5] <= min(held)
