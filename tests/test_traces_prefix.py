"""The prefix (radix-LRU) curve of ``pytools/traces/prefix.py`` against an independent
radix-tree simulation, one capacity at a time; the planted wrong curves the check must
catch; the token rule; where radix LRU and the one-pass curve differ (below the longest
request)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from pytools.traces.prefix import (
    PrefixTrace,
    block_weights,
    budget_blocks,
    prefix_curve_of,
    read_prefix_trace,
    warmup_requests,
)
from pytools.traces.trace import ScanSummary, TraceError, Window

# ----------------------------------------------------------------------------- references


def radix_lru(requests: list[list[int]], weights: list[list[int]], capacity: int,
              warm: int) -> tuple[int, int]:
    """Radix LRU, the semantics as the trace authors' simulator states them, written from
    the statement: a request hits the leading run of its cached blocks (each touched, head
    first); its missing blocks are inserted head first (each touched), evicting the least
    recently touched leaf not among the request's blocks cached before its insertions (a block
    it has just inserted may go); insertion stops when no leaf can go, or when the block's
    parent went.
    Returns ``(hits, measured)`` over the requests from index ``warm`` on."""
    cached: dict[int, int] = {}  # block -> last touch
    children: dict[int, int] = {}  # cached children of a cached block
    parent: dict[int, int | None] = {}
    clock = 0
    hits = measured = 0
    for r, (req, wts) in enumerate(zip(requests, weights, strict=True)):
        run = True
        for x, w in zip(req, wts, strict=True):
            if r >= warm:
                measured += w
            if run and x in cached:
                if r >= warm:
                    hits += w
                clock += 1
                cached[x] = clock
            else:
                run = False
        path = {x for x in req if x in cached}  # protected: cached before the insertions
        prev: int | None = None
        for x in req:
            if x not in cached:
                if len(cached) >= capacity:
                    leaves = [b for b in cached if children.get(b, 0) == 0 and b not in path]
                    if not leaves:
                        break
                    victim = min(leaves, key=cached.__getitem__)
                    del cached[victim]
                    up = parent[victim]
                    if up is not None:
                        children[up] -= 1
                if prev is not None and prev not in cached:
                    break  # its parent was just evicted: the rest cannot be inserted
                clock += 1
                cached[x] = clock
                parent[x] = prev
                if prev is not None:
                    children[prev] = children.get(prev, 0) + 1
            prev = x
    return hits, measured


def one_pass(requests: list[list[int]], weights: list[list[int]], warm: int,
             head_first: bool = False, shift: int = 0) -> list[int]:
    """The one-pass method in plain Python (a list as the LRU stack), with planted defects:
    ``head_first`` touches a request's blocks head first; ``shift`` moves the curve by that
    many capacities. Entry k - 1: hits at capacity k, k = 1..distinct."""
    stack: list[int] = []
    distinct = len({x for req in requests for x in req})
    hist = [0] * (distinct + 2)
    for r, (req, wts) in enumerate(zip(requests, weights, strict=True)):
        run = 0
        alive = True
        for x, w in zip(req, wts, strict=True):
            if x not in stack:
                alive = False
            if alive and r >= warm:
                run = max(run, stack.index(x) + 1)
                hist[min(run + shift, distinct + 1)] += w
        for x in (req if head_first else reversed(req)):
            if x in stack:
                stack.remove(x)
            stack.insert(0, x)
    return list(np.cumsum(hist[1 : distinct + 1]))


def chained_trace(seed: int, requests: int = 40, longest: int = 6) -> list[list[int]]:
    """Random requests with chained ids: each extends a prefix of an earlier one (or none)
    with fresh ids, so no id follows two different predecessors."""
    rng = random.Random(seed)
    out: list[list[int]] = []
    fresh = 0
    for _ in range(requests):
        base: list[int] = []
        if out and rng.random() < 0.8:
            src = rng.choice(out[-8:])
            base = src[: rng.randint(1, len(src))]
        n = rng.randint(len(base), max(len(base), longest)) - len(base)
        if not base and n == 0:
            n = 1
        out.append(base + list(range(fresh, fresh + n)))
        fresh += n
    return out


def make_trace(requests: list[list[int]], weights: list[list[int]]) -> PrefixTrace:
    ids = np.array([x for r in requests for x in r], dtype=np.int64)
    ends = np.cumsum([len(r) for r in requests]).astype(np.int64)
    w = np.array([x for r in weights for x in r], dtype=np.int64)
    summary = ScanSummary(path=Path("t.jsonl"), sha256="0" * 64, requests=len(requests),
                          references=int(ids.shape[0]), lines=len(requests))
    return PrefixTrace(summary, ids, ends, w, "tokens", 1)


def random_weights(requests: list[list[int]], seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    return [[512] * (len(r) - 1) + [rng.randint(1, 512)] if r else [] for r in requests]


def exact_against(curve_hits: list[int], requests: list[list[int]], weights: list[list[int]],
                  warm: int) -> list[int]:
    """Capacities (>= the longest request, up to distinct) where ``curve_hits`` is not radix
    LRU's hits."""
    longest = max(len(r) for r in requests)
    distinct = len({x for r in requests for x in r})
    return [k for k in range(max(longest, 1), distinct + 1)
            if curve_hits[k - 1] != radix_lru(requests, weights, k, warm)[0]]


# ----------------------------------------------------------------------------- tests


@pytest.mark.parametrize("seed", range(12))
def test_curve_is_radix_lru_from_the_longest_request(seed: int) -> None:
    requests = chained_trace(seed)
    weights = random_weights(requests, seed)
    warm = warmup_requests(len(requests), 0.5 if seed % 2 else 0.0)
    curve = prefix_curve_of(make_trace(requests, weights), 0.5 if seed % 2 else 0.0)
    assert curve.warmup_requests == warm
    assert exact_against(list(curve.hits), requests, weights, warm) == []
    assert list(curve.hits) == one_pass(requests, weights, warm)
    _, measured = radix_lru(requests, weights, 1, warm)
    assert curve.measured == measured
    assert curve.hits[-1] == curve.ceiling  # every block fits: the prefix ceiling
    assert curve.longest == max(len(r) for r in requests)


@pytest.mark.parametrize("plant", ["head_first", "shift"])
def test_planted_wrong_curves_are_caught(plant: str) -> None:
    """Touching head first, or a curve one capacity off, fails the same check somewhere."""
    caught = False
    for seed in range(12):
        requests = chained_trace(seed)
        weights = random_weights(requests, seed)
        wrong = one_pass(requests, weights, 0, head_first=plant == "head_first",
                         shift=1 if plant == "shift" else 0)
        caught |= bool(exact_against(wrong, requests, weights, 0))
    assert caught


def test_below_the_longest_request_radix_lru_can_differ() -> None:
    """Below the longest request the simulator's radix LRU may evict a block the request has
    just inserted (the only leaf off its cached path) and then stop, its parent gone: at
    capacity 1 requests of two blocks leave nothing cached, while the flat cache keeps the
    request's head. The curve is the flat one's there; on random traces they often differ."""
    requests = [[0, 1], [0, 1], [0]]
    weights = [[1] * len(r) for r in requests]
    curve = prefix_curve_of(make_trace(requests, weights))
    assert radix_lru(requests, weights, 1, 0)[0] == 0
    assert int(curve.hits[0]) == 2  # [0] hits in requests 2 and 3
    assert radix_lru(requests, weights, 2, 0)[0] == int(curve.hits[1]) == 3
    differ = 0
    for seed in range(40):
        reqs = chained_trace(seed, requests=12, longest=5)
        w = [[1] * len(r) for r in reqs]
        hits = prefix_curve_of(make_trace(reqs, w)).hits
        differ += sum(int(hits[k - 1]) != radix_lru(reqs, w, k, 0)[0]
                      for k in range(1, max(len(r) for r in reqs)))
    assert differ > 0


def test_token_rule_and_refusals(tmp_path: Path) -> None:
    assert block_weights(3, 1025) == [512, 512, 1]
    assert block_weights(3, 1536) == [512, 512, 512]
    assert block_weights(3, 1024) is None and block_weights(3, 1537) is None
    assert block_weights(0, 0) == []
    good = tmp_path / "good.jsonl"
    good.write_text("".join(json.dumps({"input_length": n, "hash_ids": ids}) + "\n"
                            for n, ids in [(700, [0, 1]), (100, [0]), (1500, [0, 1, 2])]))
    t = read_prefix_trace(good, "tokens")
    assert t.weights.tolist() == [512, 188, 100, 512, 512, 476]
    assert read_prefix_trace(good, "blocks").weights.tolist() == [1] * 6
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text() + json.dumps({"input_length": 9000, "hash_ids": [5]}) + "\n")
    with pytest.raises(TraceError, match=r"bad\.jsonl:4: input_length 9000 does not fit 1"):
        read_prefix_trace(bad, "tokens")
    read_prefix_trace(bad, "blocks")  # blocks need no input_length
    nolen = tmp_path / "nolen.jsonl"
    nolen.write_text(json.dumps({"hash_ids": [1]}) + "\n")
    with pytest.raises(TraceError, match=r"nolen\.jsonl:1: missing 'input_length'"):
        read_prefix_trace(nolen, "tokens")


def test_unchained_ids_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps({"input_length": 512 * len(ids), "hash_ids": ids}) + "\n"
                            for ids in [[0, 1], [0, 1, 2], [3, 1]]))
    with pytest.raises(TraceError, match=r"t\.jsonl:3: a block id follows a different"):
        prefix_curve_of(read_prefix_trace(path, "tokens"))


def test_warmup_and_budget_rules() -> None:
    assert warmup_requests(12031, 0.5) == 6015
    assert warmup_requests(3, 1.0) == 3 and warmup_requests(3, 0.0) == 0
    with pytest.raises(ValueError):
        warmup_requests(3, 1.5)
    # the simulator's DeepSeek-V3 sizing: 70,272 bytes a token, 512-token blocks
    assert budget_blocks(64 * 2**30, 70272) == 1909
    assert budget_blocks(512 * 2**30, 70272) == 15279


def test_sparse_ids_and_windows(tmp_path: Path) -> None:
    """Ids too large to index by (raw 64-bit hashes) give the curve of their dense renaming;
    a window is its lines alone, and its errors name the file's line."""
    requests = chained_trace(3)
    weights = random_weights(requests, 3)
    dense = prefix_curve_of(make_trace(requests, weights), 0.5)
    sparse = [[(x + 1) * 2**40 + 7 for x in r] for r in requests]
    curve = prefix_curve_of(make_trace(sparse, weights), 0.5)
    assert curve.hits.tolist() == dense.hits.tolist() and curve.distinct == dense.distinct
    path = tmp_path / "t.jsonl"
    lines = [(512 * len(r), r) for r in requests]
    path.write_text("".join(json.dumps({"input_length": n, "hash_ids": ids}) + "\n"
                            for n, ids in lines) + '{"hash_ids": [1, 2]}\n')
    window = read_prefix_trace(path, "tokens", Window(5, 9))
    assert window.summary.requests == 5 and window.first_line == 5
    assert window.ids.tolist() == [x for r in requests[4:9] for x in r]
    with pytest.raises(TraceError, match=rf"t\.jsonl:{len(requests) + 1}: missing"):
        read_prefix_trace(path, "tokens", Window(len(requests), len(requests) + 1))
